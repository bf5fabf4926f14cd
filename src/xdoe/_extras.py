"""Which optional extra of the distribution brings which module.

The core install (``pip install -e .`` from a clone) is what ``xgen`` and
``xrun experiment-start`` need; everything else is an extra named in
``pyproject.toml``. A command that reaches a module of a missing extra says
which extra to install, with the command that installs it for this install
(:func:`missing_extra`, :func:`install_command`).
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "missing_extra", "install_command", "installed"]

#: top-level module -> the extra that installs it
EXTRAS = {
    "pandas": "analysis", "statsmodels": "analysis", "matplotlib": "analysis",
    "fastapi": "dashboard", "uvicorn": "dashboard", "jinja2": "dashboard", "plotly": "dashboard",
    "stable_baselines3": "sb3", "torch": "sb3",
    "pettingzoo": "pettingzoo", "pygame": "pettingzoo",
    "psycopg": "postgres",
    "pyarrow": "parquet",
    "dask": "dask", "distributed": "dask",
    "alembic": "migrate", "mako": "migrate",
    "optuna": "optuna",
    "tensorboard": "tensorboard", "mlflow": "mlflow",
}


def missing_extra(exc: ImportError) -> str | None:
    """``error`` text naming the extra to install when ``exc`` is a module of
    one of our extras that is not installed, else ``None``."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return None
    return f"this needs the {extra!r} extra ({name} is not installed): {install_command(extra)}"


_READ = object()


def install_command(extra: str, direct_url: str | None | object = _READ) -> str:
    """The command that adds ``extra`` to this install of xdoe: ``pip install
    -e '/path/to/clone[EXTRA]'`` for an editable install from a clone (as the
    README installs it), ``pip install '/path[EXTRA]'`` for one from a local
    folder, else ``pip install 'xdoe[EXTRA]'``. ``direct_url``: the text of
    the distribution's PEP 610 ``direct_url.json`` (``None``: none; default:
    read from the installed distribution)."""
    import json
    import shlex

    if direct_url is _READ:
        direct_url = _direct_url()
    try:
        data = json.loads(direct_url) if isinstance(direct_url, str) else {}
    except ValueError:
        data = {}
    url = data.get("url") if isinstance(data, dict) else None
    if isinstance(url, str) and url.startswith("file://"):
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        folder = url2pathname(urlparse(url).path)  # (it unquotes %20)
        editable = bool((data.get("dir_info") or {}).get("editable"))
        return f"pip install {'-e ' if editable else ''}{shlex.quote(f'{folder}[{extra}]')}"
    return f"pip install 'xdoe[{extra}]'"


def _direct_url() -> str | None:
    """The installed distribution's ``direct_url.json`` (``None`` from an index or when not installed)."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        return distribution("xdoe").read_text("direct_url.json")
    except (PackageNotFoundError, OSError):
        return None


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
