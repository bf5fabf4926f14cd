"""Skipping finished runs, resuming interrupted ones, and the checkpoints that
make resuming inside a phase possible.

**What happens when a run document is started** (:func:`decision_for`, the
one rule; a campaign reads the state of all its runs with one query,
:mod:`xdoe.campaign`):

* a finished instance of the same run uid *and* content hash exists: the run
  is skipped ("finished earlier (instance N)") unless ``rerun``;
* the latest instance is ``interrupted`` (Ctrl-C, SIGTERM) or ``running`` but
  dead (same host and its process is gone, or its heartbeat is older than
  ``heartbeat_timeout`` seconds): that **same instance** is continued
  (status back to ``running``; ``session_metadata.json`` lists the resume
  times under ``resumed``);
* the latest instance is ``running`` and alive: the run is skipped ("running
  in instance N");
* otherwise (no instance, or the latest ``failed``): a new instance.

**Where a resumed instance continues** (:func:`prepare_resume`): phases whose
row is ``finished`` are not run again; the first other phase continues from
its newest complete resume state (a checkpoint of every agent of the phase
plus ``checkpoints/state-<phase>-s<step>.pkl``), else it is run again from
its start (its phase row, episodes, steps, checkpoints and brain sources are
deleted). Episode and step rows of the continued phase with an episode number
at or beyond the saved counter of their worker are deleted, as are the same
lines of ``episodes.jsonl`` / ``all_transactions.csv``; the workers continue
with those episode numbers. So in the instance, every (phase, worker, agent,
episode) is recorded exactly once; the instance holds the truth (export
its rows; there is no second instance).

**Checkpoints** (:class:`PhaseCheckpointer`): every agent's brain is saved at
the end of every phase and, when ``phase_config.checkpoint_every`` is set, at
the first episode end after every ``checkpoint_every`` environment updates of
the phase (all workers together); the recorder is flushed first, so every
episode before a checkpoint is in the store. Retention (``keep_checkpoints``,
``best_window``) is :class:`~xdoe.execution._checkpoints.CheckpointManager`'s.

**What is identical after a resume.** The resume state holds, per worker, the
next episode number, the ``rng`` state of each environment, the state of
the parameter-sampler generator and the pickled ``__dict__`` of each muscle
(its ``rng``, epsilon, counters; falling back to the ``rng`` state alone
when it does not pickle; the brain's ``muscle_state()`` is sent again
after restoring). With one worker, a run resumed from a checkpoint continues
exactly as the uninterrupted run would have, provided its components keep
their randomness in ``rng`` and their state in what is saved:
``Brain.store``/``load`` (the default pickles ``__dict__``), the muscle's
attributes, and an environment that is reset each episode from its ``rng``
(``DummyEnvironment``; a ``GymnasiumEnvironment`` continues from a
generator re-seeded from the restored ``rng``: deterministic, but not the
uninterrupted sequence). With several workers, the episodes the other
workers had in progress at the checkpoint are run again from their start
(with the state of that moment), so the resumed run is complete and
deterministic but not identical to an uninterrupted one. Termination
conditions start afresh in a resumed phase (their ``PhaseProgress`` carries
the restored step and episode counters).
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe.execution._hooks import EpisodeEnd, Hook
from xdoe.store import HEARTBEAT_TIMEOUT

if TYPE_CHECKING:
    from xdoe.execution._checkpoints import CheckpointManager
    from xdoe.execution._plan import PhasePlan, RunPlan
    from xdoe.store import CheckpointInfo, InstanceInfo, RunRecorder, RunState, Store

__all__ = [
    "Decision",
    "ResumePoint",
    "PhaseCheckpointer",
    "decide",
    "decision_for",
    "prepare_resume",
]

_STATE_VERSION = 1


@dataclass(frozen=True)
class Decision:
    """What to do with a run: ``action`` is ``skip``, ``resume`` or ``new``;
    ``instance`` the instance skipped for / resumed; ``note`` a line for people."""

    action: str
    instance: "InstanceInfo | None" = None
    instance_id: int | None = None
    note: str | None = None


def decide(store: "Store", uid: str, content_hash: str, *, rerun: bool = False,
           heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> Decision:
    """What to do with the run version ``(uid, content_hash)``: :func:`decision_for`
    its state read with one query (:meth:`store.runs.run_state <xdoe.store.runs._runs.Runs.run_state>`)."""
    if rerun:
        return Decision("new")
    return decision_for(store.runs.run_state(uid, content_hash), heartbeat_timeout=heartbeat_timeout)


def decision_for(state: "RunState", *, rerun: bool = False,
                 heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> Decision:
    """The one run/skip/resume rule (see the module docstring) applied to what
    the store knows of a run version (:meth:`store.runs.run_states <xdoe.store.runs._runs.Runs.run_states>`:
    one query for a whole campaign)."""
    if rerun:
        return Decision("new")
    if state.finished is not None:
        done = state.finished
        return Decision("skip", instance_id=done, note=f"skipped: finished earlier (instance {done})")
    latest = state.latest
    if latest is None:
        return Decision("new")
    if latest.status == "running":
        if latest.alive(heartbeat_timeout):
            return Decision("skip", latest, latest.id,
                            f"skipped: running in instance {latest.id} (host {latest.host}, pid {latest.pid})")
        return Decision("resume", latest, latest.id,
                        f"resumed instance {latest.id} (its process {latest.pid} on {latest.host} is gone)")
    if latest.status == "interrupted":
        return Decision("resume", latest, latest.id, f"resumed interrupted instance {latest.id}")
    return Decision("new")


# -- resume state of a phase -------------------------------------------------------------

@dataclass
class WorkerState:
    """What a worker needs beyond the brains to continue a phase."""

    next_episode: int
    envs: list[Any]                    # rng bit_generator state per environment (or None)
    samplers: list[Any]                # sampler generator state per environment (or None)
    muscles: dict[str, dict[str, Any]]  # agent -> {"dict": bytes | None, "rng": state | None}


@dataclass
class PhaseState:
    """A resume state: the phase's step counter, the checkpoint of each agent
    and each worker's :class:`WorkerState`."""

    phase_index: int
    steps: int
    episodes: int
    checkpoints: dict[str, int]
    workers: list[WorkerState]
    version: int = _STATE_VERSION


@dataclass
class ResumePoint:
    """Where a resumed instance continues.

    Attributes:
        instance_id: the continued instance.
        done: schedule indices of the phases not to run again.
        phase_index: the first phase to run.
        phase_id: its existing row when it continues from ``state`` (else ``None``).
        state: the resume state it continues from, or ``None`` (the phase restarts).
        brains: agent -> the checkpoint its brain is restored from when it is
            constructed (its newest checkpoint before ``phase_index``, or the
            one of ``state``).
        aggregates: phase index -> (episodes, steps, {agent: reward sum},
            {agent: objective sum}) of the episodes the store keeps.
    """

    instance_id: int
    done: set[int]
    phase_index: int
    phase_id: int | None
    state: PhaseState | None
    brains: dict[str, "CheckpointInfo"] = field(default_factory=dict)
    aggregates: dict[int, tuple[int, int, dict[str, float], dict[str, float]]] = field(default_factory=dict)


def _generator_state(obj: Any) -> Any:
    import numpy as np  # here: deciding what to do with a run (a campaign's parent) needs no numpy

    rng = getattr(obj, "rng", None)
    return rng.bit_generator.state if isinstance(rng, np.random.Generator) else None


def _set_generator_state(obj: Any, state: Any) -> None:
    import numpy as np

    rng = getattr(obj, "rng", None)
    if state is not None and isinstance(rng, np.random.Generator):
        rng.bit_generator.state = state


def snapshot_muscle(muscle: Any) -> dict[str, Any]:
    """``{"dict": pickle of __dict__ or None, "rng": generator state or None}``."""
    try:
        data: bytes | None = pickle.dumps(muscle.__dict__, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - unpicklable attributes: keep the rng state only
        data = None
    return {"dict": data, "rng": _generator_state(muscle)}


def restore_muscle(muscle: Any, saved: dict[str, Any], brain: Any) -> None:
    """Restore a muscle from :func:`snapshot_muscle`, then send it the brain's
    ``muscle_state()`` again (so it shares the brain's current model)."""
    if saved.get("dict") is not None:
        muscle.__dict__.update(pickle.loads(saved["dict"]))
    else:
        _set_generator_state(muscle, saved.get("rng"))
    state = brain.muscle_state()
    if state is not None:
        muscle.update(state)


def _load_state(path: Path) -> PhaseState | None:
    try:
        with path.open("rb") as fh:
            state = pickle.load(fh)
    except Exception:  # noqa: BLE001 - a torn or foreign file is no resume state
        return None
    return state if isinstance(state, PhaseState) and state.version == _STATE_VERSION else None


# -- preparing a resumed instance ---------------------------------------------------------

def prepare_resume(store: "Store", recorder: "RunRecorder", plan: "RunPlan") -> ResumePoint:
    """Decide where the resumed instance continues and drop what will be
    redone (rows and results-file lines), then reopen the recorder's files.

    Call after :meth:`RunRecorder.resume` succeeded.
    """
    assert recorder.instance_id is not None and recorder.paths is not None
    instance_id = recorder.instance_id
    phases = store.runs.phases(instance_id)
    by_index = {p.index: p for p in phases}
    done = {i for i, p in by_index.items() if p.status == "finished"}
    k = next((ph.index for ph in plan.phases if ph.index not in done), len(plan.phases))
    checkpoints = store.checkpoints.of_instance(instance_id)
    existing = {c.id: c for c in checkpoints}

    state: PhaseState | None = None
    row = by_index.get(k)
    if row is not None:
        for path in recorder.paths.resume_states(k):
            candidate = _load_state(path)
            if candidate is not None and all(cid in existing for cid in candidate.checkpoints.values()):
                state = candidate
                break
    names = {ph.index: ph.name for ph in plan.phases}
    later = [p.id for p in phases if p.index > k or (p.index == k and state is None)]
    continued = row.id if state is not None and row is not None else None
    store.runs.drop_redone(later, continued, [ws.next_episode for ws in state.workers] if state else ())
    kept = {names[i] for i in done if i in names}
    if row is None or state is None:
        recorder.keep_results(lambda phase, w, e: phase in kept)
    else:
        nxt = [ws.next_episode for ws in state.workers]
        recorder.keep_results(lambda phase, w, e: phase in kept or (
            phase == names.get(k) and w < len(nxt) and e < nxt[w]))
    recorder.reopen()

    brains: dict[str, CheckpointInfo] = {}
    for c in checkpoints:
        if c.id in existing and c.phase_index is not None and c.phase_index < k:
            brains[c.agent] = c  # oldest first: the newest one before phase k wins
    if state is not None:
        for agent, cid in state.checkpoints.items():
            brains[agent] = existing[cid]
    aggregates = store.runs.phase_sums(instance_id)
    return ResumePoint(instance_id, done, k, None if state is None or row is None else int(row.id),
                       state, brains, aggregates)


# -- checkpoints during a phase ------------------------------------------------------------

class PhaseCheckpointer(Hook):
    """Saves the brains of a phase's agents with a resume state: a hook that
    checkpoints every ``checkpoint_every`` steps (checked at episode ends)
    and at the phase's end.

    Args:
        manager: the phase's :class:`CheckpointManager`.
        recorder: the run's recorder (flushed before every checkpoint).
        phase: the phase; ``runtime`` its ``_PhaseRuntime``; ``brains`` the run's brains.
        samplers: per worker, per environment, the sampler generator or ``None``.
        episodes_done: episodes finished in the phase before this session (resume).
    """

    def __init__(self, manager: "CheckpointManager", recorder: "RunRecorder", phase: "PhasePlan",
                 runtime: Any, brains: dict[str, Any], samplers: list[list[Any]],
                 episodes_done: int = 0) -> None:
        self.manager = manager
        self.recorder = recorder
        self.phase = phase
        self.runtime = runtime
        self.brains = brains
        self.samplers = samplers
        self.episodes = episodes_done
        self.every = phase.checkpoint_every
        steps = runtime.progress.steps
        self.next_at = None if not self.every else (steps // self.every + 1) * self.every
        self.saved = 0

    def on_episode_end(self, end: EpisodeEnd) -> None:
        """One episode of one worker finished: feed the metric; checkpoint when due."""
        self.episodes += 1
        for agent, value in end.episode.objectives.items():
            self.manager.observe_episode(agent, value)
        if self.next_at is not None and self.runtime.progress.steps >= self.next_at:
            self.save()
            steps = self.runtime.progress.steps
            self.next_at = (steps // self.every + 1) * self.every  # type: ignore[operator]

    def on_phase_end(self, result: Any) -> None:
        """The phase's last checkpoint (``final``)."""
        self.save(final=True)

    def save(self, final: bool = False) -> dict[str, "CheckpointInfo"]:
        """Checkpoint every agent of the phase and write the resume state."""
        self.recorder.flush()
        steps = int(self.runtime.progress.steps)
        infos = {}
        for spec in self.phase.agents:
            infos[spec.name] = self.manager.save(
                self.brains[spec.name], agent=spec.name, phase_id=self.recorder.phase_id,
                phase_index=self.phase.index, step=steps, episode=self.episodes)
        workers = []
        for w, worker in enumerate(self.runtime.workers):
            if final:
                workers.append(WorkerState(worker.episode, [], [], {}))
                continue
            workers.append(WorkerState(
                next_episode=int(worker.episode),
                # an environment with samplers is re-created from its sampler generator
                envs=[None if self.samplers[w][i] is not None else _generator_state(env)
                      for i, env in enumerate(worker.envs)],
                samplers=[None if g is None else g.bit_generator.state for g in self.samplers[w]],
                muscles={a.name: snapshot_muscle(a.muscle) for a in worker.agents},
            ))
        state = PhaseState(self.phase.index, steps, self.episodes,
                           {a: i.id for a, i in infos.items()}, workers)
        paths = self.recorder.paths
        assert paths is not None
        target = paths.resume_state(self.phase.index, steps)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as fh:
                pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)  # e.g. a full disk: leave no temporary file behind
            raise
        for old in paths.resume_states(self.phase.index)[self.phase.keep_checkpoints + 1:]:
            old.unlink(missing_ok=True)
        self.saved += 1
        return infos


def restore_worker(worker: Any, saved: WorkerState, brains: dict[str, Any]) -> None:
    """Restore the muscles of a worker of a resumed phase (environments and
    samplers are restored when they are constructed)."""
    for agent in worker.agents:
        muscle_state = saved.muscles.get(agent.name)
        if muscle_state is not None:
            restore_muscle(agent.muscle, muscle_state, brains[agent.name])

