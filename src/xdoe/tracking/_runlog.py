"""One run's phases and episodes to trackers: :class:`RunLog`, the one
per-run writing that live logging (an observer of the run's recorder) and
``xrun export --to`` (from the store) share."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from xdoe.documents import LogTarget, log_targets
from xdoe.errors import TrackingWarning
from xdoe.tracking._tracker import EpisodeLog, TrackedRun, Tracker

__all__ = ["RunLog", "make_tracker", "missing_extras", "open_live", "TRACKER_MODULES"]

#: log kind -> the module its tracker writes with (its extra: :attr:`LogTarget.extra`)
TRACKER_MODULES = {"tensorboard": "tensorboard", "mlflow": "mlflow"}

#: ``warn(key, message, category)``: how a live log reports a failure (the run's report)
Warn = Callable[[str, str, type[Warning]], Any]


def make_tracker(target: LogTarget | str) -> Tracker:
    """The tracker writing ``target`` (``tensorboard:DIR``, ``mlflow:URI``)."""
    from xdoe.documents import parse_log_target

    target = parse_log_target(target)
    if target.kind == "tensorboard":
        from xdoe.tracking._tensorboard import TensorBoardTracker

        return TensorBoardTracker(target.where)
    from xdoe.tracking._mlflow import MlflowTracker

    return MlflowTracker(target.where)


def missing_extras(targets: Iterable[LogTarget | str]) -> list[str]:
    """One line per target whose library is not installed, naming the extra
    to install (``xrun`` refuses those before anything runs, exit 2)."""
    from xdoe._extras import install_command, installed

    lines = []
    for target in log_targets(list(targets)):
        module = TRACKER_MODULES[target.kind]
        if not installed(module):
            lines.append(f"{target}: this needs the {target.extra!r} extra ({module} is not installed): "
                         f"{install_command(target.extra)}")
    return lines


class RunLog:
    """Feeds one run instance to its trackers: :meth:`open`, then
    :meth:`phase_started`, :meth:`episode_finished` as they come (the
    :class:`~xdoe.store.RecorderObserver` calls, so a run's recorder takes it
    as an observer) and :meth:`run_finished`.

    It counts each worker's environment steps over the run (``env_step``,
    once per worker and episode). With ``warn`` (live logging) a tracker
    that raises is reported once through it (:class:`~xdoe.errors.TrackingWarning`)
    and dropped, and the run goes on; without it (an export) the error is raised.
    """

    def __init__(self, trackers: Sequence[Tracker], info: TrackedRun, *, warn: Warn | None = None) -> None:
        self.trackers = list(trackers)
        self.info = info
        self.warn = warn
        self.episodes = 0
        self._phase: tuple[int, str, str] | None = None
        self._env_steps: dict[int, int] = {}
        self._counted: dict[int, tuple[int, int]] = {}  # worker -> (phase index, episode) its steps count

    def open(self, *, replace: bool = False) -> bool:
        """Open the run in every tracker; ``False`` when none opened it (an
        export: each holds this instance already and ``replace`` is false)."""
        opened = [t for t in list(self.trackers) if self._call(t, t.open_run, self.info, replace=replace)]
        self.trackers = opened
        return bool(opened)

    def end_others(self, ended: Mapping[str, str]) -> None:
        """:meth:`Tracker.end_others <xdoe.tracking.Tracker.end_others>` in every tracker:
        ``ended`` maps the uuid of each other instance of the run whose process is gone to its status."""
        for tracker in list(self.trackers):
            self._call(tracker, tracker.end_others, self.info, ended)

    def phase_started(self, index: int, name: str, mode: str, config: Any = None) -> None:
        self._phase = (int(index), str(name), str(mode))

    def episode_finished(self, worker: int, episode: int, agent: str, steps: int,
                         reward: float | None, objective: float | None) -> None:
        if self._phase is None or not self.trackers:
            return
        index, name, mode = self._phase
        first = self._counted.get(worker) != (index, episode)
        if first:
            self._counted[worker] = (index, episode)
            self._env_steps[worker] = self._env_steps.get(worker, 0) + int(steps)
        log = EpisodeLog(name, index, mode, int(worker), int(episode), str(agent), int(steps),
                         None if reward is None else float(reward),
                         None if objective is None else float(objective), self._env_steps[worker], first)
        self.episodes += 1
        for tracker in list(self.trackers):
            self._call(tracker, tracker.log_episode, log)

    def run_finished(self, status: str) -> None:
        for tracker in list(self.trackers):
            self._call(tracker, tracker.close_run, status)
        self.trackers = []

    def close(self, status: str) -> None:
        """The same as :meth:`run_finished` (a run that ends before its recorder finished)."""
        self.run_finished(status)

    def _call(self, tracker: Tracker, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.warn is None:
            return method(*args, **kwargs)
        try:
            return method(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - logging never fails a run: warned once, the target dropped
            if tracker in self.trackers:
                self.trackers.remove(tracker)
            detail = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
            self.warn(f"tracking {tracker}", f"logging to {tracker} failed ({detail}); the run goes on without "
                      "it (the store keeps every episode: `xrun export --to` writes them later)", TrackingWarning)
            try:
                if method != tracker.close_run:  # bound methods: equal, never identical
                    tracker.close_run("failed")
            except Exception:  # noqa: BLE001 - already reported
                pass
            return None


#: a resumed instance's recorded phases: ``(index, name, mode, episode rows)`` in order, each row
#: ``(worker, episode, agent, steps, reward, objective, ...)`` (:meth:`store.views.phase_episodes <xdoe.store.views._views.Views.phase_episodes>`)
Recorded = Iterable[tuple[int, str, str, Iterable[Sequence[Any]]]]


def open_live(targets: Sequence[LogTarget | str], info: TrackedRun, warn: Warn, *,
              recorded: Callable[[], Recorded] | None = None,
              ended: Callable[[], Mapping[str, str]] | None = None) -> RunLog | None:
    """A :class:`RunLog` of ``targets`` opened for a run that starts now,
    failures warned through ``warn``; ``None`` when no target opened.

    ``ended`` gives the other instances of the run whose process is gone
    (uuid -> status, :meth:`RunLog.end_others`): the tracker runs a killed
    process left open are ended (MLflow: KILLED, FAILED) when the run
    starts again, as a new instance or resumed.

    A resumed instance gives ``recorded``, the episodes the store keeps of
    it: its tracker runs are written anew from them (what a killed process
    had not flushed to a tracker, and the episodes the resume runs again,
    would otherwise be missing or twice there), and the log goes on live
    from there, its ``env_step`` counts included."""
    log = RunLog([make_tracker(t) for t in log_targets(list(targets))], info, warn=warn)
    if not log.open(replace=recorded is not None):
        return None
    if ended is not None:
        try:
            others = ended()
        except Exception as exc:  # noqa: BLE001 - the store's error: the log goes on, warned
            warn("tracking others", f"the other instances of the run could not be read ({type(exc).__name__}: "
                 f"{exc}); their tracker runs stay as they are", TrackingWarning)
        else:
            log.end_others(others)
    if recorded is not None:
        try:
            for index, name, mode, rows in recorded():
                log.phase_started(index, name, mode)
                for row in rows:
                    log.episode_finished(*row[:6])
        except Exception as exc:  # noqa: BLE001 - the store's error: the log goes on live, warned
            warn("tracking replay", f"the episodes recorded before the resume could not be logged again "
                 f"({type(exc).__name__}: {exc})", TrackingWarning)
    return log
