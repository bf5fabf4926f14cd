"""The agent side of the plugin API: an agent is a :class:`Brain` (learns),
one :class:`Muscle` per worker (acts) and an :class:`Objective` (scores)."""

from xdoe.agent._agent import Brain, Experience, Mode, Muscle, Objective

__all__ = ["Brain", "Muscle", "Objective", "Experience", "Mode"]
