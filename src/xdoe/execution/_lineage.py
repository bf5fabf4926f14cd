"""Lineage: where an agent's brain comes from (``load:``), offline training on
stored steps (``replay:``) and the ``brain_source`` rows that record both.

In a run document, on an agent::

    load: {agent: learner, experiment_run: taxi-study-0003, phase: training}
    load: {path: _outputs/results/taxi-study-0003/.../checkpoints/0-learner-e300-s9000.brain}
    replay: [{agent: learner, experiment_run: taxi-study-0003, phase: training}]

``load`` with ``experiment_run`` takes the newest checkpoint of that agent
(``agent`` defaults to the loading agent's own name) in that phase (a name or
a schedule index; omitted: any phase, i.e. the brain as the run left it) of
the latest *finished* instance of that run; ``checkpoint: best`` takes the
best one instead of the newest. ``load: {path: FILE}`` loads a checkpoint
file (relative paths from the working directory). ``load`` is applied when
the phase starts, after the brain was constructed and set up: in the first
phase an agent appears it replaces the fresh brain; in a later phase it
replaces the kept brain, unless the phase inherited the very same ``load``
from the agent's previous phase (phases inherit omitted keys, and re-loading
would throw away what the previous phase trained).

``replay`` hands the stored steps (``--store-steps all``) of the agent in
those phases of the latest finished instance of those runs to
``Brain.pretrain`` before the phase starts, as a stream of
:class:`~xdoe.agent.Experience` in (phase, worker, episode, step) order; the
``next_sensors`` of a step are the sensors of the next stored step of the same
episode (of the episode's last step: its own sensors, it is ``done``).
Like ``load``, an inherited, unchanged ``replay`` is not applied again.

Every phase start writes one ``brain_source`` row per agent: ``fresh``,
``previous_phase``, ``checkpoint`` (with source run, phase, checkpoint id,
path, sha256) or ``path`` (with path and sha256), plus one ``replay`` row per
replayed source (source run and phase).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe._files import file_sha256
from xdoe.documents import LoadSpec, ReplaySpec, parse_load, parse_replay
from xdoe.errors import RunError
from xdoe.execution._checkpoints import load_brain
from xdoe.store import SourceRow

if TYPE_CHECKING:
    from xdoe.agent import Brain, Experience
    from xdoe.store import Store

__all__ = [
    "LoadSpec",
    "ReplaySpec",
    "SourceRow",
    "parse_load",
    "parse_replay",
    "apply_load",
    "replay_experiences",
    "apply_replay",
    "record_sources",
]


# -- what the store holds (for messages) ------------------------------------------

def _missing_run(store: "Store", run_uid: str, where: str) -> str:
    statuses, uids = store.runs.run_overview(run_uid)
    if statuses:
        return (f"{where}: run {run_uid!r} has no finished instance in store {store.url} "
                f"(its instances: {', '.join(sorted(set(statuses)))}); run it to the end first")
    close = difflib.get_close_matches(run_uid, uids, n=3)
    shown = close or sorted(uids)[:10]
    listing = ", ".join(shown) if shown else "none"
    label = "did you mean" if close else f"runs there ({len(uids)}; first 10)"
    return f"{where}: store {store.url} has no run {run_uid!r}; {label}: {listing}"


def _phase_matches(phase: str | int | None, index: int, name: str) -> bool:
    return phase is None or (phase == index if isinstance(phase, int) else phase == name)


def _describe_missing(store: "Store", spec: LoadSpec | ReplaySpec, what: str) -> str:
    where = spec.key
    assert spec.run is not None
    instance = store.runs.finished_instance(spec.run)
    if instance is None:
        return _missing_run(store, spec.run, where)
    phases = [(p.index, p.name) for p in store.runs.phases(instance)]
    agents = store.checkpoints.checkpointed_agents(instance)
    phase_list = ", ".join(f"{i}: {n}" for i, n in phases) or "none"
    if not any(_phase_matches(spec.phase, i, n) for i, n in phases):
        return (f"{where}: run {spec.run!r} (instance {instance}) has no phase {spec.phase!r}; "
                f"its phases: {phase_list}")
    agent_list = "; ".join(f"{a} (phases {', '.join(ps)})" for a, ps in sorted(agents.items())) or "none"
    return (f"{where}: run {spec.run!r} (instance {instance}) has no {what} of agent "
            f"{spec.agent!r} in phase {spec.phase!r}; agents with checkpoints: {agent_list}; "
            f"phases: {phase_list}")


# -- load -----------------------------------------------------------------------------

def apply_load(store: "Store | None", spec: LoadSpec, brain: "Brain", agent: str) -> SourceRow:
    """Load the brain ``spec`` names into ``brain``; return its ``brain_source`` row.

    Raises:
        RunError: the run, agent, phase or checkpoint does not exist (the
            message lists what does), the file is missing or changed, or
            ``brain.load`` raised.
    """
    if spec.path is not None:
        path = Path(spec.path).expanduser()
        if not path.is_file():
            raise RunError(f"{spec.key}.path: no checkpoint file {path} "
                           f"(relative paths start at {Path.cwd()})")
        digest = file_sha256(path)
        try:
            brain.load(path)
        except Exception as exc:  # noqa: BLE001 - user code: name the file
            raise RunError(f"{spec.key}: {type(brain).__name__}.load({path}) raised "
                           f"{type(exc).__name__}: {exc}") from exc
        return SourceRow(agent, "path", path=str(path.resolve()), sha256=digest)
    if store is None:
        raise RunError(f"{spec.key}: loading from run {spec.run!r} needs a store")
    assert spec.run is not None
    info = store.checkpoints.latest_checkpoint(spec.run, spec.agent, spec.phase, finished_only=True,
                                   best=spec.which == "best")
    if info is None:
        raise RunError(_describe_missing(store, spec, "checkpoint"))
    load_brain(brain, info)
    return SourceRow(agent, "checkpoint", run_uid=spec.run, phase=info.phase,
                     checkpoint_id=info.id, path=str(info.path), sha256=info.sha256)


# -- replay ---------------------------------------------------------------------------

def _value(space: Any, value: Any) -> Any:
    if value is None or space is None:
        return value
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return int(value)
    dtype = getattr(space, "dtype", None)
    if isinstance(space, spaces.Box) and dtype is not None:
        import numpy as np

        return np.asarray(value, dtype=dtype)
    return value


def replay_experiences(store: "Store", spec: ReplaySpec, brain: "Brain") -> Iterator["Experience"]:
    """The stored steps ``spec`` names as experiences, streamed (see the module
    docstring). Sensors and actuators are those of the brain's ``setup``
    (their spaces), filled with the stored values by id.

    Raises:
        RunError: the run, phase or agent does not exist, or no steps of it were stored.
    """
    from xdoe.agent import Experience
    from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

    instance = store.runs.finished_instance(spec.run)
    if instance is None:
        raise RunError(_missing_run(store, spec.run, spec.key))
    rows = store.runs.phases(instance)
    phase_ids = [r.id for r in rows if _phase_matches(spec.phase, r.index, r.name)]
    if not phase_ids:
        listing = ", ".join(f"{r.index}: {r.name}" for r in rows) or "none"
        raise RunError(f"{spec.key}: run {spec.run!r} (instance {instance}) has no phase "
                       f"{spec.phase!r}; its phases: {listing}")
    counts = store.runs.step_agents(phase_ids)
    if not counts.get(spec.agent):
        if counts:
            raise RunError(f"{spec.key}: run {spec.run!r} (instance {instance}) stored no steps "
                           f"of agent {spec.agent!r} in phase {spec.phase!r}; agents with "
                           f"stored steps: {', '.join(sorted(counts))}")
        raise RunError(f"{spec.key}: run {spec.run!r} (instance {instance}) stored no steps in "
                       f"phase {spec.phase!r}; run it with --store-steps all to replay it")
    sensor_spaces = {s.uid: s.space for s in getattr(brain, "sensors", [])}
    actuator_spaces = {a.uid: a.space for a in getattr(brain, "actuators", [])}

    def sensors_of(values: dict[str, Any]) -> list[Any]:
        if not sensor_spaces:
            return [SensorInformation(uid, None, v) for uid, v in values.items()]  # type: ignore[arg-type]
        missing = [uid for uid in sensor_spaces if uid not in values]
        if missing:
            raise RunError(f"{spec.key}: the stored steps of run {spec.run!r} have no sensor "
                           f"{missing[0]!r} (they have: {', '.join(values)})")
        return [SensorInformation(uid, space, _value(space, values[uid]))
                for uid, space in sensor_spaces.items()]

    def actuators_of(values: dict[str, Any]) -> list[Any]:
        if not actuator_spaces:
            return [ActuatorInformation(uid, None, v) for uid, v in values.items()]  # type: ignore[arg-type]
        return [ActuatorInformation(uid, space, _value(space, values.get(uid)))
                for uid, space in actuator_spaces.items()]

    previous: Any = None
    for row in store.runs.steps(phase_ids, spec.agent):  # phase ids grow with the schedule index
        if previous is not None:
            same = (previous.phase_id, previous.worker, previous.episode) == (
                row.phase_id, row.worker, row.episode)
            yield _experience(Experience, previous, sensors_of, actuators_of,
                              row.sensors if same else None, RewardInformation)
        previous = row
    if previous is not None:
        yield _experience(Experience, previous, sensors_of, actuators_of, None, RewardInformation)


def _experience(cls: Any, row: Any, sensors_of: Any, actuators_of: Any, next_raw: Any,
                reward_cls: Any) -> Any:
    import json

    def js(v: Any) -> Any:
        return json.loads(v) if isinstance(v, str) else (v or {})

    sensors = sensors_of(js(row.sensors))
    next_sensors = sensors if next_raw is None else sensors_of(js(next_raw))
    rewards = [reward_cls(uid, float(v)) for uid, v in js(row.rewards).items()]
    return cls(int(row.worker), int(row.episode), int(row.step), sensors, actuators_of(js(row.actions)),
               rewards, float(row.objective or 0.0), next_sensors, bool(row.done))


def apply_replay(store: "Store | None", specs: tuple[ReplaySpec, ...], brain: "Brain",
                 agent: str) -> list[SourceRow]:
    """``brain.pretrain`` on each source in turn; one ``replay`` row each.

    Raises:
        RunError: as :func:`replay_experiences`, or ``pretrain`` raised.
    """
    rows = []
    for spec in specs:
        if store is None:
            raise RunError(f"{spec.key}: replay needs a store")
        experiences = replay_experiences(store, spec, brain)
        first = next(experiences, None)  # raises the "not found" errors before pretraining
        if first is None:
            raise RunError(f"{spec.key}: run {spec.run!r} stored no steps of agent {spec.agent!r}")

        def stream(first: Any = first, rest: Iterator[Any] = experiences) -> Iterator[Any]:
            yield first
            yield from rest

        try:
            brain.pretrain(stream())
        except RunError:
            raise
        except Exception as exc:  # noqa: BLE001 - user code
            raise RunError(f"{spec.key}: {type(brain).__name__}.pretrain raised "
                           f"{type(exc).__name__}: {exc}") from exc
        phase = None if spec.phase is None else str(spec.phase)
        rows.append(SourceRow(agent, "replay", run_uid=spec.run, phase=phase))
    return rows


def record_sources(store: "Store", instance_id: int, phase_id: int | None, rows: list[SourceRow]) -> None:
    """Insert the ``brain_source`` rows of one phase start (one transaction)."""
    store.checkpoints.record_brain_sources(instance_id, phase_id, rows)
