"""A loop-agnostic training session: record a training loop that lives
elsewhere (your own script, another framework) in the xdoe store, with
checkpoints, so ``xrun status``, ``xrun export`` and ``xrun tree`` see it.

>>> from xdoe import TrainingSession                                  # doctest: +SKIP
>>> with TrainingSession(brain, store="sqlite:///runs.sqlite", run="cartpole-a",
...                      experiment="cartpole", checkpoint_every=10_000, max_steps=100_000) as s:
...     while not s.is_done():
...         obs, total, steps, done = env.reset(), 0.0, 0, False
...         while not done:
...             obs, reward, done = my_step(obs)
...             s.observe()                       # one step (and checkpoints every 10,000)
...             total += reward
...         s.on_episode(total)                   # one episode row in the store
...         s.maybe_save_best()                   # checkpoint when the rolling mean improves
...     print(s.stats_summary(), s.eval_report(20))
"""

from __future__ import annotations

import time
import traceback as _traceback
from array import array
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable

from xdoe.agent import Brain, Experience
from xdoe.errors import InputError, StoreError
from xdoe.execution import CheckpointManager
from xdoe.session._checkpoints import SessionCheckpoints
from xdoe.session._figures import SessionFigures, _positive
from xdoe.store import DEFAULT_RESULTS_ROOT, CheckpointInfo, SourceRow, Store

if TYPE_CHECKING:
    from xdoe.store import RunRecorder

__all__ = ["TrainingSession"]

#: Seconds between heartbeats (``xrun status`` counts 120 s without one as interrupted).
_HEARTBEAT_SECONDS = 30.0


def _class_path(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}:{cls.__qualname__}"


class TrainingSession(SessionCheckpoints, SessionFigures):
    """Records one execution of a training loop you drive yourself.

    It registers a run (uid ``run``, in ``experiment``) with a synthetic run
    document (``schedule``: the first phase, the agent and its brain's class,
    the budgets; phases added by :meth:`new_phase` are recorded as phases but
    do not change the document, so its content hash stays that of the start; the ``levels`` you give become the design point's
    levels, i.e. factor columns of ``xrun export``), a run instance, and per
    phase its episodes (:meth:`on_episode`), steps when ``store_steps`` asks
    (:meth:`observe` with an :class:`~xdoe.agent.Experience`), checkpoints and
    the brain's source (``fresh``). Like the executor it saves the brain at
    the end of every phase.

    Args:
        agent_or_brain: a brain (anything with ``store(path)``/``load(path)``,
            e.g. an :class:`xdoe.agent.Brain`) or an object with a ``.brain``
            attribute (its ``.name`` then names the agent).
        store: a :class:`~xdoe.store.Store`, a URL, or ``None`` (``$XRUN_STORE``
            or ``sqlite:///_outputs/xrun.sqlite``).
        run: the run uid.
        experiment: the experiment uid (``None``: none).
        agent: the agent name (default: ``.name`` of an agent object, else ``"agent"``).
        phase: the first phase's name.
        mode: the first phase's mode (``train``/``test``).
        seed: recorded in the run document (the session does not seed anything).
        levels: factor name -> level of this run (JSON-able), for export.
        checkpoint_every: save a checkpoint every that many steps (``None``: never).
        keep_checkpoints: newest checkpoints kept per phase (plus the best).
        best_window: episodes the rolling mean reward (the "best" metric) spans.
        checkpoint_dir: where checkpoint files go (default: the results
            folder's ``agents/<phase index>-<phase>/<agent>/``).
        max_steps: a budget of steps :meth:`is_done` checks (``None``: none).
        max_episodes: a budget of episodes :meth:`is_done` checks (``None``: none).
        results: root of the results folders (default ``_outputs/results``).
        store_steps: ``none``, ``all`` or ``every:N``.
        save_final: save a checkpoint at the end of every phase (when the
            brain has ``store``).

    Used as a context manager it starts on entry and, on exit, finishes the
    instance ``finished``, or ``failed`` with the exception's traceback
    (``interrupted`` on ``KeyboardInterrupt``); exceptions propagate.

    Raises:
        InputError: a budget, ``keep_checkpoints`` or ``best_window`` is not a
            positive integer, ``store_steps`` is invalid, or ``run`` is empty.
        StoreError: the store cannot be opened or written.
    """

    def __init__(
        self,
        agent_or_brain: Any,
        *,
        store: "Store | str | None" = None,
        run: str,
        experiment: str | None = None,
        agent: str | None = None,
        phase: str = "training",
        mode: str = "train",
        seed: int | None = None,
        levels: dict[str, Any] | None = None,
        checkpoint_every: int | None = None,
        keep_checkpoints: int = 3,
        best_window: int = 10,
        checkpoint_dir: str | Path | None = None,
        max_steps: int | None = None,
        max_episodes: int | None = None,
        results: str | Path | None = DEFAULT_RESULTS_ROOT,
        store_steps: str = "none",
        save_final: bool = True,
    ) -> None:
        if not isinstance(run, str) or not run:
            raise InputError(f"run must be a non-empty string (the run uid), not {run!r}")
        has_brain = hasattr(agent_or_brain, "brain") and not hasattr(agent_or_brain, "store")
        self.brain = agent_or_brain.brain if has_brain else agent_or_brain
        self.agent = agent or (getattr(agent_or_brain, "name", None) if has_brain else None) or "agent"
        self.checkpoint_every = _positive("checkpoint_every", checkpoint_every)
        self.keep_checkpoints = _positive("keep_checkpoints", keep_checkpoints, allow_none=False)
        self.best_window = _positive("best_window", best_window, allow_none=False)
        self.max_steps = _positive("max_steps", max_steps)
        self.max_episodes = _positive("max_episodes", max_episodes)
        self.checkpoint_dir = None if checkpoint_dir is None else Path(checkpoint_dir)
        self.save_final = bool(save_final)
        self.run_uid = run
        self.experiment = experiment
        self._own_store = not isinstance(store, Store)
        self.store: Store = Store(store) if self._own_store else store  # type: ignore[assignment]
        self._phases: list[dict[str, Any]] = [{"name": str(phase), "mode": str(mode)}]
        document: dict[str, Any] = {
            "uid": run,
            "version": "1.0",
            "session": {"agent": self.agent, "brain": _class_path(self.brain)},
            "schedule": [self._phase_entry(str(phase), str(mode))],
        }
        if experiment is not None:
            document["experiment_uid"] = experiment
        if seed is not None:
            document["seed"] = int(seed)
        if levels:
            document["design_point"] = {"index": None, "repetition": None, "levels": dict(levels)}
        self.document = document
        try:
            self.recorder: RunRecorder = self.store.recorder(
                document, results_root=results, store_steps=store_steps)
        except Exception:
            self._close_store()
            raise
        self.manager: CheckpointManager | None = None
        self.phase_index = -1
        self.steps = 0
        self.episodes = 0
        self.phase_steps = 0
        self.phase_episodes = 0
        self._episode_steps = 0
        self._counted_steps = 0  # steps of the current episode seen by observe()
        self._rewards = array("d")
        self._best: float | None = None
        self._next_checkpoint: int | None = self.checkpoint_every
        self._started: float | None = None
        self._elapsed: float | None = None
        self._last_heartbeat = 0.0
        self.checkpoints: list[CheckpointInfo] = []
        self.status: str | None = None
        #: Called with the session after it finished (e.g. :func:`xdoe.tree.attach` judges it).
        self.finish_hooks: list[Callable[["TrainingSession"], None]] = []

    # -- life cycle ------------------------------------------------------------
    def _phase_entry(self, name: str, mode: str) -> dict[str, Any]:
        config: dict[str, Any] = {"mode": mode, "worker": 1}
        if self.max_episodes is not None:
            config["episodes"] = self.max_episodes
        if self.max_steps is not None:
            config["max_steps"] = self.max_steps
        return {name: {"agents": [{"name": self.agent, "brain": {"name": _class_path(self.brain),
                                                                 "params": {}}}],
                       "phase_config": config}}

    @property
    def instance_id(self) -> int | None:
        """The run instance's id in the store (after :meth:`start`)."""
        return self.recorder.instance_id

    @property
    def results_dir(self) -> Path | None:
        """The instance's results folder (after :meth:`start`)."""
        return self.recorder.results_dir

    def start(self) -> "TrainingSession":
        """Record the run, a new running instance and the first phase.

        Raises:
            StoreError: already started, or the store cannot be written.
        """
        self.recorder.start()
        self._started = time.perf_counter()
        self._last_heartbeat = self._started
        first = self._phases[0]
        self._open_phase(0, first["name"], first["mode"])
        return self

    def _open_phase(self, index: int, name: str, mode: str) -> None:
        config = next(iter(self._phase_entry(name, mode).values()))["phase_config"]
        self.recorder.phase_started(index, name, mode, config)
        self.phase_index = index
        self.phase_steps = self.phase_episodes = 0
        self._episode_steps = self._counted_steps = 0
        self._best = None
        assert self.recorder.paths is not None and self.instance_id is not None
        directory = self.checkpoint_dir or self.recorder.paths.agent_dir(index, name, self.agent)
        self.manager = CheckpointManager(self.store, self.instance_id, directory,
                                         keep=self.keep_checkpoints, best_window=self.best_window)
        phase_id = self.manager.phase_id_of(index)
        kind = "fresh" if index == 0 else "previous_phase"
        self.store.checkpoints.record_brain_sources(self.instance_id, phase_id, [SourceRow(self.agent, kind)])
        if hasattr(self.brain, "mode"):
            try:
                from xdoe.agent import Mode

                self.brain.mode = Mode(mode)
            except (ValueError, AttributeError, TypeError):
                pass

    def new_phase(self, name: str, mode: str = "test") -> None:
        """End the current phase (with its final checkpoint) and start the
        next one, e.g. a test phase after training. Episode numbers, the
        per-phase step count and "best" restart; totals and budgets go on."""
        self._require_running()
        self._close_phase("finished")
        self._phases.append({"name": str(name), "mode": str(mode)})
        self._open_phase(self.phase_index + 1, str(name), str(mode))

    def _close_phase(self, status: str) -> None:
        if status == "finished" and self.save_final and hasattr(self.brain, "store"):
            self.save_checkpoint()
        self.recorder.phase_finished(status)

    def finish(self, status: str = "finished", error: str | None = None,
               traceback: str | None = None) -> None:
        """End the session: the final checkpoint (``finished`` only), the
        phase and the instance with ``status`` (``finished``, ``failed``,
        ``interrupted``). A second call does nothing."""
        if self.status is not None:
            return
        self._elapsed = self.elapsed()
        try:
            if self.recorder.instance_id is not None and self.recorder.status is None:
                try:
                    if getattr(self.recorder, "_phase_id", None) is not None:
                        self._close_phase(status)
                except Exception as exc:
                    if status == "finished":  # the final checkpoint failed: the run did too
                        status, error = "failed", f"{type(exc).__name__}: {exc}"
                        traceback = _traceback.format_exc()
                        if getattr(self.recorder, "_phase_id", None) is not None:
                            self.recorder.phase_finished("failed")
                    else:
                        raise
            self.recorder.finish(status, error=error, traceback=traceback)
            self.status = status
            for hook in self.finish_hooks:
                hook(self)
        finally:
            self._close_store()

    def close(self) -> None:
        """:meth:`finish` with ``finished`` (nothing when already finished)."""
        self.finish("finished")

    def _close_store(self) -> None:
        if self._own_store:
            self.store.close()

    def __enter__(self) -> "TrainingSession":
        if self.recorder.instance_id is None:
            self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.finish(*self.recorder.exit_status(exc_type, exc, tb))

    def _require_running(self) -> None:
        if self.recorder.instance_id is None:
            raise StoreError(f"training session {self.run_uid}: start() it first (or use `with`)")
        if self.status is not None:
            raise StoreError(f"training session {self.run_uid}: already finished")

    # -- steps and episodes -----------------------------------------------------
    def observe(self, experience: Any = None) -> Any:
        """Count one step of the agent; checkpoint when ``checkpoint_every`` is due.

        When ``experience`` is an :class:`xdoe.agent.Experience`, the brain an
        :class:`xdoe.agent.Brain` and the phase in train mode, the brain learns
        from it (``brain.thinking``) and its update is returned; the step is
        also recorded when ``store_steps`` asks. Anything else is only counted.

        Returns:
            the brain's update or ``None``.
        """
        self._require_running()
        self.steps += 1
        self.phase_steps += 1
        self._episode_steps += 1
        self._counted_steps += 1
        update = None
        if isinstance(experience, Experience):
            if isinstance(self.brain, Brain) and self._phases[-1]["mode"] == "train":
                update = self.brain.thinking(experience)
            self.recorder.step(
                worker=0, episode=self.phase_episodes, step=self._episode_steps - 1,
                agent=self.agent, sensors={s.uid: s.value for s in experience.sensors},
                actions={a.uid: a.value for a in experience.actuators},
                rewards={r.uid: r.value for r in experience.rewards},
                objective=experience.objective, done=experience.done)
        self._after_steps()
        if not self.steps & 1023:  # long episodes: keep the instance's heartbeat fresh
            self._maybe_heartbeat(time.perf_counter())
        return update

    def on_episode(self, total_reward: float, steps: int | None = None, status: str | None = None,
                   extras: dict[str, Any] | None = None, *, objective: float | None = None,
                   wall_time: float | None = None) -> None:
        """Record one finished episode (one row in the store and ``episodes.jsonl``).

        Args:
            total_reward: the episode's summed reward.
            steps: its length; default: the :meth:`observe` calls since the
                last episode. Steps not seen by :meth:`observe` count towards
                ``max_steps`` and ``checkpoint_every`` here.
            status: how it ended (e.g. ``"terminated"``, ``"truncated"``),
                kept in the row's ``extras``; ``"terminated"`` and
                ``"truncated"`` also fill the row's ``terminated`` and
                ``truncated`` columns (unknown, ``None``, for other statuses).
            extras: JSON-able details kept with the row.
            objective: the agent's objective; default ``total_reward``. It
                feeds the rolling "best" metric.
            wall_time: seconds; default the time since the previous episode.
        """
        self._require_running()
        counted = self._counted_steps
        length = counted if steps is None else int(steps)
        if length > counted:  # steps the caller did not observe() one by one
            extra = length - counted
            self.steps += extra
            self.phase_steps += extra
        now = time.perf_counter()
        if wall_time is None:
            wall_time = now - getattr(self, "_last_episode_end", self._started or now)
        self._last_episode_end = now
        row_extras = dict(extras) if extras else {}
        if status is not None:
            row_extras["status"] = status
        value = float(total_reward) if objective is None else float(objective)
        self.recorder.episode_finished(worker=0, episode=self.phase_episodes, agent=self.agent,
                                       steps=length, reward=float(total_reward), objective=value,
                                       wall_time=float(wall_time), extras=row_extras or None,
                                       **_end_of(status))
        self.recorder.flush()  # durable before the next episode starts
        assert self.manager is not None
        self.manager.observe_episode(self.agent, value)
        self._rewards.append(float(total_reward))
        self.episodes += 1
        self.phase_episodes += 1
        self._episode_steps = self._counted_steps = 0
        self._after_steps()
        self._maybe_heartbeat(now)

    def _maybe_heartbeat(self, now: float) -> None:
        if now - self._last_heartbeat >= _HEARTBEAT_SECONDS:
            self.recorder.heartbeat()
            self._last_heartbeat = now


def _end_of(status: str | None) -> dict[str, Any]:
    """The episode-end columns a session's ``status`` tells (nothing when it tells neither)."""
    if status in ("terminated", "truncated"):
        return {"terminated": status == "terminated", "truncated": status == "truncated"}
    return {}
