"""A termination condition that presses Ctrl-C once, to interrupt a run
in the middle of a phase (tests/tracking/test_resume_logging.py)."""

from __future__ import annotations

import os
import signal
import time

from xdoe.conditions import EpisodeProgress, TerminationCondition, Verdict

#: ``{"at": N}``: press Ctrl-C after the run's N-th episode; empty: never
ARMED: dict[str, int] = {}


class InterruptAfter(TerminationCondition):
    """Sends its own process SIGINT (a real Ctrl-C: the run is interrupted,
    resumable) after ``ARMED["at"]`` episodes."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        self.seen += 1
        if ARMED and self.seen == ARMED["at"]:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises KeyboardInterrupt long before this ends
        return Verdict.CONTINUE
