"""``prune_components.CurveEnvironment`` slowed by ``pause`` seconds per
episode, so that a test can SIGKILL ``xrun`` while a run is in the middle
of its training (the episodes, rewards and decisions are the same)."""

from __future__ import annotations

import time
from typing import Any

from prune_components import CurveEnvironment


class SlowCurveEnvironment(CurveEnvironment):
    def __init__(self, uid: str, seed: int, pause: float = 0.003, **params: Any) -> None:
        super().__init__(uid=uid, seed=seed, **params)
        self.pause = float(pause)

    def start_environment(self) -> Any:
        time.sleep(self.pause)
        return super().start_environment()
