"""What a run reports while it executes: :class:`PhaseResult` per phase and
:class:`ProgressEvent` for progress displays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


__all__ = ["PhaseResult", "ProgressEvent", "ProgressCallback"]


@dataclass
class PhaseResult:
    """What one phase produced.

    Attributes:
        index, name, mode: the phase.
        episodes: episodes finished, all workers together (truncated ones included).
        steps: environment updates, all workers together.
        rewards: agent name -> mean over episodes of the episode's summed
            environment rewards.
        objectives: agent name -> mean over episodes of the summed objective.
        wall_time: seconds.
        stopped_by: ``"episodes"`` (every worker ran its budget),
            ``"condition"`` (a STOP_PHASE verdict) or ``"run_condition"``
            (STOP_RUN).
    """

    index: int
    name: str
    mode: str
    episodes: int = 0
    steps: int = 0
    rewards: dict[str, float] = field(default_factory=dict)
    objectives: dict[str, float] = field(default_factory=dict)
    wall_time: float = 0.0
    stopped_by: str = "episodes"

    @classmethod
    def from_sums(cls, index: int, name: str, mode: str,
                  sums: "tuple[int, int, dict[str, float], dict[str, float]] | None") -> "PhaseResult":
        """A phase's result read back from the store: ``sums`` is its entry of
        :meth:`store.runs.phase_sums <xdoe.store.runs._runs.Runs.phase_sums>` (episodes, steps, and per agent
        the summed reward and objective; ``None``: nothing recorded)."""
        n, steps, rewards, objectives = sums or (0, 0, {}, {})
        total = max(n, 1)
        return cls(index, name, mode, episodes=n, steps=steps,
                   rewards={a: v / total for a, v in rewards.items()},
                   objectives={a: v / total for a, v in objectives.items()})


@dataclass
class ProgressEvent:
    """Sent to a progress callback at every phase start and episode end.

    Attributes:
        run: the run uid; phase, phase_index, phases: the current phase, its
        index and the number of phases; episodes / episodes_total: episodes
        finished in the phase / planned (workers x episodes); steps: updates
        in the run so far.
    """

    run: str
    phase: str
    phase_index: int
    phases: int
    episodes: int
    episodes_total: int
    steps: int


ProgressCallback = Callable[[ProgressEvent], None]
