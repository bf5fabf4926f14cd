"""A termination condition that presses Ctrl-C once, to interrupt a run in
the middle of a phase, resumable (the resume tests of tests/execution and
tests/tracking; referenced as ``interrupts:InterruptAfter``, tests/ is on
``sys.path``)."""

from __future__ import annotations

import os
import signal
import time

from xdoe.conditions import EpisodeProgress, TerminationCondition, Verdict

#: ``{"at": n}`` makes every InterruptAfter press Ctrl-C at the n-th episode; empty: never.
ARMED: dict[str, int] = {}


class InterruptAfter(TerminationCondition):
    """Presses Ctrl-C (sends its own process SIGINT, which raises
    KeyboardInterrupt) after ``ARMED["at"]`` episodes of the run. A plain
    ``raise KeyboardInterrupt`` would count as plugin code failing its run."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        self.seen += 1
        if ARMED and self.seen == ARMED["at"]:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises KeyboardInterrupt long before this ends
        return Verdict.CONTINUE
