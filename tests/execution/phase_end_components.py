"""Components that force an ordering between parallel worker processes
(``--parallel-workers``) without sleeping: before an action, a worker's
muscle waits until another worker's muscle is in an action (a FIFO), or until
a brain update that marks another episode's end has reached its process.

The run process sends a worker everything in one pipe, in order: a ``stop``
it sends while handling a batch goes before the brain updates of that batch.
So when :class:`Signal` (the update :class:`SignallingBrain` returns for the
last experience of the episode it watches) is unpickled in a worker process
(by the thread that reads that pipe, which then sets :data:`ARRIVED`), any
stop sent with it is already in the worker's inbox: the worker sees it at its
next check, after the action that waited.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import threading
from typing import Any

from components import CountingMuscle, RecordingBrain

from xdoe.agent import Experience

#: Set in a process when a :class:`Signal` arrives there.
ARRIVED = threading.Event()
#: Seconds a :class:`WaitingMuscle` waits before failing the run (instead of hanging).
PATIENCE = 60.0


def _arrive(tag: tuple[int, int]) -> "Signal":
    ARRIVED.set()
    return Signal(tag)


class Signal:
    """A brain update that sets :data:`ARRIVED` where it is unpickled."""

    def __init__(self, tag: tuple[int, int]) -> None:
        self.tag = tag

    def __reduce__(self) -> tuple[Any, ...]:
        return _arrive, (self.tag,)


class SignallingBrain(RecordingBrain):
    """A :class:`~components.RecordingBrain` whose update for the last
    experience (``done``) of episode ``episode`` of worker ``worker`` is a
    :class:`Signal`."""

    def __init__(self, seed: int = 0, worker: int = 0, episode: int = 0) -> None:
        super().__init__(seed=seed)
        self.watched = (worker, episode)

    def thinking(self, experience: Experience) -> Any:
        update = super().thinking(experience)
        if experience.done and (experience.worker, experience.episode) == self.watched:
            return Signal(self.watched)
        return update


def hear(fifo: str) -> None:
    """Wait until another process :func:`tell` s through ``fifo``."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not select.select([fd], [], [], PATIENCE)[0]:
            raise RuntimeError(f"nobody told through {fifo} within {PATIENCE} s")
        os.read(fd, 1)
    finally:
        os.close(fd)


def tell(fifo: str) -> None:
    """Tell the process that :func:`hear` s (or will) through ``fifo``."""
    with open(fifo, "wb") as f:
        f.write(b"!")


class WaitingMuscle(CountingMuscle):
    """A :class:`~components.CountingMuscle` that, in the process of parallel
    worker ``w``, before the first action of its episode ``e`` (counted by its
    resets), for each ``[w, e, fifo]`` of ``hears`` waits until told through
    ``fifo``, then for each of ``tells`` tells, then for each ``[w, e]`` of
    ``waits`` waits for :data:`ARRIVED` (failing after :data:`PATIENCE` s)."""

    def __init__(self, uid: str, seed: int = 0, hears: list[list[Any]] | None = None,
                 tells: list[list[Any]] | None = None, waits: list[list[int]] | None = None) -> None:
        super().__init__(uid=uid, seed=seed)
        me = multiprocessing.current_process().name

        def mine(entries: list[list[Any]] | None) -> dict[int, list[Any]]:
            out: dict[int, list[Any]] = {}
            for w, e, *rest in entries or []:
                if me == f"xdoe-worker-{w}":
                    out.setdefault(e, []).append(rest[0] if rest else None)
            return out

        self.hears, self.tells, self.waits = mine(hears), mine(tells), mine(waits)
        self.acted: set[int] = set()

    def propose_actions(self, sensors, actuators):
        episode = self.resets - 1
        if episode not in self.acted:
            self.acted.add(episode)
            for fifo in self.hears.get(episode, ()):
                hear(fifo)
            for fifo in self.tells.get(episode, ()):
                tell(fifo)
            if episode in self.waits:
                if not ARRIVED.wait(PATIENCE):
                    raise RuntimeError(f"no Signal within {PATIENCE} s")
                ARRIVED.clear()
        return super().propose_actions(sensors, actuators)
