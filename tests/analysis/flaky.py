"""A muscle that fails mid-run, for the tests of runs that did not finish."""

from __future__ import annotations

from typing import Any

from xdoe.agents import DummyMuscle


class FlakyMuscle(DummyMuscle):
    """:class:`~xdoe.agents.DummyMuscle` that raises ``RuntimeError`` at its
    ``fail_at``-th proposal (counted over the run; 0: never)."""

    def __init__(self, uid: str, seed: int = 0, fail_at: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.fail_at, self.proposals = int(fail_at), 0

    def propose_values(self, observation: Any) -> Any:
        self.proposals += 1
        if self.proposals == self.fail_at:
            raise RuntimeError("flaky muscle: planted failure")
        return super().propose_values(observation)
