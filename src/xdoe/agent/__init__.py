"""The agent side of the plugin API: an agent is a :class:`Brain` (learns),
one :class:`Muscle` per worker (acts) and an :class:`Objective` (scores);
:class:`Experience` is one step as the agent lived it, :class:`Mode` the
phase's train or test."""

from xdoe.agent._brain import Brain
from xdoe.agent._experience import Experience, Mode
from xdoe.agent._muscle import Muscle
from xdoe.agent._objective import Objective

__all__ = ["Brain", "Muscle", "Objective", "Experience", "Mode"]
