"""A muscle class that acts for several workers in one call (it overrides
``Muscle.propose_batch`` and keeps its answers those of ``DummyMuscle``),
recording the batch sizes it was called with (``lockstep_components:Class``)."""

from __future__ import annotations

from typing import Any, Sequence

from xdoe.agent import Muscle
from xdoe.agents import DummyMuscle

#: the number of muscles of every propose_batch call, in order (tests clear it)
BATCHES: list[int] = []


class BatchingDummyMuscle(DummyMuscle):
    """``DummyMuscle`` whose muscles of one agent act in one call per round."""

    @classmethod
    def propose_batch(cls, muscles: Sequence[Muscle], observations: Sequence[Any]) -> list[Any]:
        BATCHES.append(len(muscles))
        return super().propose_batch(muscles, observations)


try:
    from xdoe.agents import SB3Muscle
except ImportError:  # pragma: no cover - without the sb3 extra
    SB3Muscle = None  # type: ignore[assignment,misc]

if SB3Muscle is not None:
    class BatchingSB3Muscle(SB3Muscle):  # type: ignore[misc,valid-type]
        """``SB3Muscle`` recording the batch sizes of its ``propose_batch`` calls."""

        @classmethod
        def propose_batch(cls, muscles: Sequence[Muscle], observations: Sequence[Any]) -> list[Any]:
            BATCHES.append(len(muscles))
            return super().propose_batch(muscles, observations)
