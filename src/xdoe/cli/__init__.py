"""The two command-line applications, ``xgen`` (:mod:`xdoe.cli._xgen`) and
``xrun`` (:mod:`xdoe.cli._xrun`). Kept apart so that ``xgen`` never imports the
executor, the store or gymnasium."""

__all__: list[str] = []
