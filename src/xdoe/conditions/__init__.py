"""Termination conditions: when episodes, phases and runs end.

Every condition answers a :class:`Verdict` after each environment update and
each episode (CONTINUE < RESET < STOP_PHASE < STOP_RUN; the highest answer of
all conditions wins). Built-ins: :class:`EnvironmentTerminationCondition`,
:class:`MaxEpisodesTerminationCondition`, :class:`MaxStepsTerminationCondition`,
:class:`AgentObjectiveTerminationCondition`.
"""

from xdoe.conditions._base import (
    Decision,
    EpisodeProgress,
    PhaseProgress,
    StepProgress,
    TerminationCondition,
    Verdict,
)
from xdoe.conditions._conditions import (
    AgentObjectiveTerminationCondition,
    EnvironmentTerminationCondition,
    MaxEpisodesTerminationCondition,
    MaxStepsTerminationCondition,
)

__all__ = [
    "Verdict",
    "Decision",
    "TerminationCondition",
    "PhaseProgress",
    "StepProgress",
    "EpisodeProgress",
    "EnvironmentTerminationCondition",
    "MaxEpisodesTerminationCondition",
    "MaxStepsTerminationCondition",
    "AgentObjectiveTerminationCondition",
]
