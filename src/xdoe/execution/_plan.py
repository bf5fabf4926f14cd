"""A run document resolved into what the executor needs: phases with their
environments, agents, simulation controller, conditions and configuration,
each component with the document key it came from (for error messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping

from xdoe.documents import LoadSpec, ReplaySpec, parse_load, parse_replay
from xdoe.errors import DocumentError, parse_key_path

if TYPE_CHECKING:
    from xdoe.documents import PruneSpec, RunDocument
    from xdoe._plugins import SampledParameters

__all__ = [
    "ComponentPlan", "EnvironmentPlan", "AgentSpec", "PhasePlan", "RunPlan", "plan_run", "document_data",
]


@dataclass(frozen=True)
class ComponentPlan:
    """A ``{name, params}`` block: ``name`` is ``pkg.module:Class``; ``key`` the
    document key, e.g. ``schedule[0].training.agents[0].brain``."""

    name: str
    params: dict[str, Any]
    key: str


@dataclass(frozen=True)
class EnvironmentPlan:
    """An environment of a phase (constructed once per worker).

    ``samplers`` is set when ``environment.params`` hold sampler mappings
    (``{sampler: uniform, ...}``, see :mod:`xdoe.environment`): then the
    executor re-creates the environment at every episode start with freshly
    drawn parameters."""

    uid: str
    environment: ComponentPlan
    reward: ComponentPlan | None
    key: str
    samplers: "SampledParameters | None" = None


@dataclass(frozen=True)
class AgentSpec:
    """An agent of a phase; ``sensors``/``actuators`` ``None`` means all of the
    phase's environments' sensors/actuators."""

    name: str
    brain: ComponentPlan
    muscle: ComponentPlan
    objective: ComponentPlan
    sensors: tuple[str, ...] | None
    actuators: tuple[str, ...] | None
    key: str
    load: Any = None
    replay: Any = None
    load_spec: "LoadSpec | None" = None
    replay_specs: "tuple[ReplaySpec, ...]" = ()


@dataclass(frozen=True)
class PhasePlan:
    """One phase of the schedule, complete (inherited keys filled in)."""

    index: int
    name: str
    mode: str
    workers: int
    episodes: int
    environments: tuple[EnvironmentPlan, ...]
    agents: tuple[AgentSpec, ...]
    simulation: ComponentPlan
    conditions: tuple[ComponentPlan, ...]
    config: dict[str, Any]
    key: str
    checkpoint_every: int | None = None
    keep_checkpoints: int = 3
    best_window: int = 10
    step_timeout: float | None = None
    observation_check: str | None = None  # None: the default policy (xdoe._plugins._observations)


@dataclass(frozen=True)
class RunPlan:
    """A run document ready to execute.

    Attributes:
        uid, experiment_uid, seed: from the document.
        phases: the schedule, in order.
        run_condition: ``run_config.condition`` or ``None``.
        timeout: ``run_config.timeout``: seconds the run may take, or ``None``.
        log: ``run_config.log``: where the run's episodes are logged as they
            happen (:class:`xdoe.documents.LogTarget`, written by :mod:`xdoe.tracking`).
        prune: ``run_config.prune`` (:class:`~xdoe.documents.PruneSpec`), or ``None``.
        document: the resolved run document as plain data (what the store
            records and hashes).
        file: the document's file, when it came from one.
        file_sha256: the sha256 of the file's bytes the document was parsed
            from (:func:`xdoe.execution.load_file_plan`), recorded with the run
            so that ``xrun`` skips the same bytes later without parsing them;
            ``None`` when the bytes alone do not determine the document (its
            uid is the file name's stem) or it came from no file.
    """

    uid: str
    experiment_uid: str | None
    seed: int
    phases: tuple[PhasePlan, ...]
    run_condition: ComponentPlan | None
    document: dict[str, Any] = field(repr=False)
    file: str | None = None
    timeout: float | None = None
    file_sha256: str | None = None
    log: tuple[Any, ...] = ()
    prune: "PruneSpec | None" = None

    @cached_property
    def content_hash(self) -> str:
        """The run version: :func:`xdoe.store.document_hash` of ``document``,
        computed once per plan (it travels with the plan when pickled to the
        process that runs it; the recorder and the claims use it too).

        Raises:
            DocumentError: the document cannot be stored as JSON.
        """
        from xdoe.store import document_hash

        try:
            return document_hash(self.document)
        except (TypeError, ValueError) as exc:
            raise DocumentError(f"the run document cannot be stored as JSON: {exc}", file=self.file) from None


def _component(spec: Any, key: str) -> ComponentPlan:
    return ComponentPlan(spec.name, dict(spec.params or {}), key)


def _samplers(params: dict[str, Any], key: str, file: str | None) -> "SampledParameters | None":
    if "sampler" not in repr(params):  # no mapping with a 'sampler' key anywhere (the usual case): the
        return None                    # process planning a run need not import the environment package
    from xdoe._plugins import find_samplers

    try:
        found = find_samplers(params)
    except ValueError as exc:
        raise DocumentError(str(exc), file=file, key_path=parse_key_path(key)) from None
    return found if found else None


def _positive_option(config: dict[str, Any], name: str, default: int | None, key: str,
                     file: str | None) -> int | None:
    value = config.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DocumentError(f"expected a positive integer, got {value!r}", file=file,
                            key_path=(*parse_key_path(key), "phase_config", name))
    return int(value)


def plan_run(model: "RunDocument", data: Mapping[str, Any] | None = None, *,
             file: str | None = None) -> RunPlan:
    """Resolve a validated run document into a :class:`RunPlan`.

    Args:
        model: the :class:`xdoe.documents.RunDocument` (every phase complete).
        data: the plain document with every phase complete, as returned by
            ``load_run_document``; default: dumped from ``model``.
        file: the document's file name for messages.
    """

    if data is None:
        data = document_data(model)
    phases = []
    for index, phase in enumerate(model.schedule):
        base = f"schedule[{index}].{phase.name}"
        envs = tuple(
            EnvironmentPlan(
                uid=entry.environment.uid,
                environment=_component(entry.environment, f"{base}.environments[{i}].environment"),
                reward=None if entry.reward is None
                else _component(entry.reward, f"{base}.environments[{i}].reward"),
                key=f"{base}.environments[{i}]",
                samplers=_samplers(dict(entry.environment.params or {}),
                                   f"{base}.environments[{i}].environment.params", file),
            )
            for i, entry in enumerate(phase.environments)
        )
        agents = tuple(
            AgentSpec(
                name=agent.name,
                brain=_component(agent.brain, f"{base}.agents[{i}].brain"),
                muscle=_component(agent.muscle, f"{base}.agents[{i}].muscle"),
                objective=_component(agent.objective, f"{base}.agents[{i}].objective"),
                sensors=None if agent.sensors is None else tuple(agent.sensors),
                actuators=None if agent.actuators is None else tuple(agent.actuators),
                key=f"{base}.agents[{i}]",
                load=agent.load,
                replay=agent.replay,
                load_spec=parse_load(agent.load, agent.name, f"{base}.agents[{i}].load", file),
                replay_specs=parse_replay(agent.replay, agent.name, f"{base}.agents[{i}].replay", file),
            )
            for i, agent in enumerate(phase.agents)
        )
        sim = phase.simulation
        config = phase.phase_config
        phases.append(
            PhasePlan(
                index=index,
                name=phase.name,
                mode=config.mode,
                workers=config.worker,
                episodes=config.episodes,
                environments=envs,
                agents=agents,
                simulation=ComponentPlan(sim.name, dict(sim.model_extra.get("params") or {})
                                         if sim.model_extra else {}, f"{base}.simulation"),
                conditions=tuple(
                    _component(c, f"{base}.simulation.conditions[{i}]")
                    for i, c in enumerate(sim.conditions)
                ),
                config=config.model_dump(exclude={k for k in ("step_timeout", "observation_check")
                                                  if getattr(config, k) is None}),
                step_timeout=config.step_timeout,
                observation_check=config.observation_check,
                key=base,
                checkpoint_every=_positive_option(cfg := config.model_dump(), "checkpoint_every",
                                                  None, base, file),
                keep_checkpoints=_positive_option(cfg, "keep_checkpoints", 3, base, file) or 3,
                best_window=_positive_option(cfg, "best_window", 10, base, file) or 10,
            )
        )
    condition = model.run_config.condition if model.run_config is not None else None
    return RunPlan(
        uid=model.uid,
        experiment_uid=model.experiment_uid,
        seed=int(model.seed),
        phases=tuple(phases),
        run_condition=None if condition is None else _component(condition, "run_config.condition"),
        document=dict(data),
        file=file,
        timeout=model.run_config.timeout if model.run_config is not None else None,
        log=_log_targets(model.run_config.log if model.run_config is not None else None),
        prune=model.run_config.prune if model.run_config is not None else None,
    )


def _log_targets(values: list[str] | None) -> tuple[Any, ...]:
    if not values:
        return ()
    from xdoe.documents import log_targets

    return log_targets(values)


def document_data(model: "RunDocument") -> dict[str, Any]:
    """The plain run document (file shape: phases as one-key mappings) of ``model``."""
    out = model.model_dump(mode="json", exclude={"schedule"})
    if isinstance(out.get("run_config"), dict):
        for key in ("timeout", "log"):  # absent is not written (the same hash as before they existed)
            if out["run_config"].get(key) is None:
                out["run_config"].pop(key, None)
    if isinstance(out.get("run_config"), dict):
        prune = model.run_config.prune if model.run_config is not None else None
        if prune is None:
            out["run_config"].pop("prune", None)  # likewise: no pruning rule, the hash of before
        else:
            out["run_config"]["prune"] = prune.model_dump(mode="json", exclude_unset=True)  # as written
    out["schedule"] = []
    for phase in model.schedule:
        body = phase.model_dump(mode="json", exclude={"name"})
        for key in ("step_timeout", "observation_check"):  # absent stays absent: the same content hash
            if body["phase_config"].get(key) is None:
                body["phase_config"].pop(key, None)
        out["schedule"].append({phase.name: body})
    return out
