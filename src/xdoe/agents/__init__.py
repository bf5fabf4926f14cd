"""Old name of :mod:`xdoe.components.agents` (the built-in agents), kept so
every document naming ``xdoe.agents:QLearningBrain`` or a full module path
such as ``xdoe.agents._qlearning:QLearningBrain`` loads the same classes
(and brains pickled under these paths unpickle). New documents should write
``xdoe.components.agents:Name``; see :func:`xdoe._lazy.alias_package`.
"""

from xdoe._lazy import alias_package

__getattr__, __dir__, __all__ = alias_package(__name__, "xdoe.components.agents")
