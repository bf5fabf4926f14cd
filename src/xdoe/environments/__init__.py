"""Old name of :mod:`xdoe.components.environments` (the built-in
environments), kept so every document naming
``xdoe.environments:GymnasiumEnvironment`` or a full module path such as
``xdoe.environments._gymnasium:GymnasiumEnvironment`` loads the same classes.
New documents should write ``xdoe.components.environments:Name``; see
:func:`xdoe._lazy.alias_package`.
"""

from xdoe._lazy import alias_package

__getattr__, __dir__, __all__ = alias_package(__name__, "xdoe.components.environments")
