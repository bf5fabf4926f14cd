"""The run document: one design point x one repetition, fully resolved.

xgen writes run documents; xrun reads them. Hand-written documents in
palaestrAI's shape work too: a phase may omit keys, which it then takes from
the previous phase (``phase_config`` key by key, the other keys whole), an
empty ``reward``/``state_transformer`` name means none, and unknown keys are
kept (``model_extra``) rather than refused.

Example (the shape in ``docs/architecture.md``)::

    uid: taxi-study-0003
    experiment_uid: taxi-study
    seed: 1804289383
    version: "1.0"
    design_point: {index: 3, repetition: 0, levels: {alpha: 0.5}}
    run_config: {condition: {name: xdoe.conditions:MaxEpisodesTerminationCondition, params: {}}}
    schedule:
      - training:
          environments: [{environment: {name: ..., uid: taxi, params: {}}, reward: null}]
          agents: [{name: learner, brain: {...}, muscle: {...}, objective: {...},
                    sensors: [taxi.observation], actuators: [taxi.action]}]
          simulation: {name: xdoe.simulation:VanillaSimController, conditions: [...]}
          phase_config: {mode: train, worker: 1, episodes: 300}
      - testing:
          phase_config: {mode: test, episodes: 20}     # the rest as in "training"
"""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Annotated, Any, Sequence

from pydantic import Field, field_validator, model_validator

from xdoe.documents._components import AgentBase, Component, PhaseConfigBase, RunConfigBase, Simulation
from xdoe.documents._identifiers import experiment_uid_problem, name_problem, run_uid_problem
from xdoe.documents._storable import refuse_unstorable
from xdoe.documents._validation import (
    DocumentModel,
    Integer,
    check_unknown_keys,
    empty_name_means_none,
    ensure_valid,
    short_repr,
)
from xdoe.documents._versions import RUN_DOCUMENT_VERSION
from xdoe.documents._yaml import YamlDocument, load_yaml

__all__ = [
    "RUN_DOCUMENT_VERSION",
    "RunDocumentWarning",
    "RunEnvironmentComponent",
    "RunEnvironment",
    "RunAgent",
    "RunPhaseConfig",
    "RunPhase",
    "RunConfig",
    "RunDesignPoint",
    "SessionInfo",
    "RunDocument",
    "load_run_document",
    "parse_run_document",
]


PHASE_KEYS = ("environments", "agents", "simulation", "phase_config")


class RunDocumentWarning(UserWarning):
    """A run document was accepted with a default it does not state (no
    ``uid``: the file name; no ``episodes``: 1); xrun prints these."""


class RunEnvironmentComponent(Component):
    """The environment component of a run; ``uid`` prefixes its sensor and actuator ids."""

    uid: str = Field(min_length=1, description="environment uid; sensor/actuator ids are '<uid>.<id>'")


class RunEnvironment(DocumentModel):
    """One environment of a phase, with optional reward and state transformer
    (``None`` = none; an empty name in the document also means none)."""

    environment: RunEnvironmentComponent
    reward: Annotated[Component | None, empty_name_means_none] = None
    state_transformer: Annotated[Component | None, empty_name_means_none] = None


class RunAgent(AgentBase):
    """One agent of a phase.

    ``sensors``/``actuators`` are full ids ``<environment uid>.<id>``;
    ``None`` means every sensor (actuator) of the phase's environments.
    """

    name: str = Field(min_length=1)
    sensors: list[str] | None = None
    actuators: list[str] | None = None


class RunPhaseConfig(PhaseConfigBase):
    """A phase's ``phase_config`` (:class:`~xdoe.documents._components.PhaseConfigBase`);
    ``mode`` is ``train`` or ``test`` in any case."""

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("train", "test"):
            return value.strip().lower()
        raise ValueError(f"expected mode 'train' or 'test', got {short_repr(value)}")


class RunPhase(DocumentModel):
    """One phase; ``name`` is the key of its one-key mapping in ``schedule``."""

    name: str
    environments: list[RunEnvironment] = Field(min_length=1)
    agents: list[RunAgent] = Field(min_length=1)
    simulation: Simulation
    phase_config: RunPhaseConfig

    @model_validator(mode="after")
    def _unique(self) -> "RunPhase":
        seen: set[str] = set()
        for entry in self.environments:
            if entry.environment.uid in seen:
                raise ValueError(f"environment uid {entry.environment.uid!r} appears twice in phase {self.name!r}")
            seen.add(entry.environment.uid)
        names: set[str] = set()
        for agent in self.agents:
            if agent.name in names:
                raise ValueError(f"agent name {agent.name!r} appears twice in phase {self.name!r}")
            names.add(agent.name)
        return self


class RunConfig(RunConfigBase):
    """The run document's ``run_config``
    (:class:`~xdoe.documents._components.RunConfigBase`): an empty
    ``condition`` name means none."""


class RunDesignPoint(DocumentModel):
    """Where a generated run comes from: design point ``index``,
    ``repetition`` (0-based) and the factors' ``levels``."""

    index: Integer = Field(ge=0)
    repetition: Integer = Field(ge=0)
    levels: dict[str, Any] = Field(default_factory=dict)


class SessionInfo(DocumentModel):
    """Where a session of a tree comes from (``xrun branch`` and ``xrun grow``
    write it into the child's document instead of ``experiment_uid`` and
    ``design_point``: a child is not a run of the design). ``tree`` is the
    session tree's uid, ``parent`` the parent's run uid and ``parent_hash``
    the content hash of its document, ``phase`` the parent's phase the
    brains were loaded from (``None``: its last), ``overrides`` what the
    child changed (each key as given -> the value it set, e.g.
    ``{brain.params.alpha: 0.25}``). Provenance only, not membership:
    ``experiment`` and ``design_point`` name the design run the tree's
    branch started from, when it started from one."""

    tree: str = Field(min_length=1)
    parent: str = Field(min_length=1)
    parent_hash: str | None = None
    phase: str | None = None
    overrides: dict[str, Any] = Field(default_factory=dict)
    experiment: str | None = None
    design_point: RunDesignPoint | None = None


class RunDocument(DocumentModel):
    """A validated run document (see the module docstring for the shape).

    ``schedule`` holds the phases in order, each complete (omitted keys were
    taken from the previous phase). ``seed`` is 0 when a hand-written
    document gives none.
    """

    uid: str = Field(min_length=1)
    experiment_uid: str | None = None
    seed: Integer = Field(default=0, ge=0)
    version: str | None = None
    design_point: RunDesignPoint | None = None
    session: SessionInfo | None = None
    run_config: RunConfig | None = None
    schedule: list[RunPhase] = Field(min_length=1)

    @field_validator("uid")
    @classmethod
    def _safe_uid(cls, value: str) -> str:
        problem = run_uid_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("experiment_uid")
    @classmethod
    def _safe_experiment_uid(cls, value: str | None) -> str | None:
        problem = None if value is None else experiment_uid_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    def phase_names(self) -> list[str]:
        return [phase.name for phase in self.schedule]


def _complete_phases(data: dict, source: YamlDocument) -> dict:
    """A copy of ``data`` whose phases have every key: omitted keys come from
    the previous phase (``phase_config`` merged key by key)."""
    schedule = data.get("schedule")
    if not isinstance(schedule, list):
        return data
    out = dict(data)
    phases: list[Any] = []
    previous: dict | None = None
    for i, entry in enumerate(schedule):
        if not (isinstance(entry, dict) and len(entry) == 1):
            raise source.error(
                f"expected a one-key mapping 'phase name: {{...}}', got {short_repr(entry)}", ("schedule", i)
            )
        (name, body), = entry.items()
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise source.error(f"expected a mapping of phase keys, got {short_repr(body)}", ("schedule", i, name))
        body = dict(body)
        if previous is not None:
            for key, value in previous.items():
                if key not in body:
                    body[key] = copy.deepcopy(value)
                elif key == "phase_config" and isinstance(value, dict) and isinstance(body[key], dict):
                    body[key] = {**copy.deepcopy(value), **body[key]}
        else:
            missing = [k for k in PHASE_KEYS if k not in body]
            if missing:
                raise source.error(
                    f"the first phase must give {', '.join(missing)} (later phases inherit them)",
                    ("schedule", i, name),
                )
        phases.append({name: body})
        previous = body
    out["schedule"] = phases
    return out


def _model_input(data: dict) -> dict:
    out = dict(data)
    if isinstance(data.get("schedule"), list):  # else the model reports it missing or malformed
        out["schedule"] = [{"name": name, **body} for entry in data["schedule"] for name, body in entry.items()]
    return out


def _check_names(model: "RunDocument", source: YamlDocument) -> None:
    """Refuse phase names, agent names and environment uids outside
    :func:`~xdoe.documents._identifiers.name_problem`'s rules (they name
    files and store keys)."""
    for i, phase in enumerate(model.schedule):
        where: tuple = ("schedule", i, phase.name)
        problem = name_problem(phase.name, "phase name")
        if problem is not None:
            raise source.error(problem, where)
        for k, env in enumerate(phase.environments):
            problem = name_problem(env.environment.uid, "environment uid")
            if problem is not None:
                raise source.error(problem, where + ("environments", k, "environment", "uid"))
        for k, agent in enumerate(phase.agents):
            problem = name_problem(agent.name, "agent name")
            if problem is not None:
                raise source.error(problem, where + ("agents", k, "name"))


def _warn_defaults(model: "RunDocument", data: dict, source: YamlDocument, uid_given: bool) -> None:
    """Warn (:class:`RunDocumentWarning`) about defaults a hand-written run
    document takes silently: the uid from the file name, one episode."""
    if not uid_given:
        warnings.warn(
            str(source.error(f"no 'uid': the run is named after its file, {model.uid!r}")),
            RunDocumentWarning, stacklevel=3,
        )
    for i, entry in enumerate(data.get("schedule") or []):
        (name, body), = entry.items()
        config = body.get("phase_config") if isinstance(body, dict) else None
        if not (isinstance(config, dict) and "episodes" in config):
            warnings.warn(
                str(source.error("no 'episodes' in phase_config: the phase runs 1 episode per worker",
                                 ("schedule", i, name))),
                RunDocumentWarning, stacklevel=3,
            )
            break


def parse_run_document(source: YamlDocument | dict, *, file: str | None = None) -> tuple[RunDocument, dict]:
    """Validate a loaded run document.

    Args:
        source: a :class:`YamlDocument` (line numbers in errors) or plain data.
        file: name used in errors when ``source`` is plain data.

    Returns:
        ``(model, data)``: the :class:`RunDocument` and the plain document
        with every phase complete (same shape as the file).

    Warns:
        RunDocumentWarning: no ``uid`` or no ``episodes`` (defaults taken).

    Raises:
        DocumentError: with file, line and key path; also for a NaN or
            infinite number anywhere (no JSON form, the store cannot hold it).
    """
    if not isinstance(source, YamlDocument):
        source = YamlDocument(data=source, file=file or "<string>")
    data = source.data
    if not isinstance(data, dict):
        raise source.error(f"expected a mapping at the top level, got {short_repr(data)}")
    if "definitions" in data:
        raise source.error(f"this is an experiment document: run `xgen generate {source.file}` first "
                           "(it writes the run documents xrun executes)", ("definitions",))
    refuse_unstorable(source)
    data = _complete_phases(dict(data), source)
    uid_given = "uid" in data
    if "uid" not in data and source.file not in ("<string>",):
        data["uid"] = Path(source.file).stem
    names = [next(iter(entry)) for entry in data.get("schedule", [])] if isinstance(data.get("schedule"), list) else []

    def translate(loc: Sequence[Any]) -> list[Any]:
        loc = list(loc)
        if len(loc) >= 2 and loc[0] == "schedule" and isinstance(loc[1], int) and loc[1] < len(names):
            rest = loc[2:]
            if rest and rest[0] == "name":
                rest = rest[1:]
            return ["schedule", loc[1], names[loc[1]], *rest]
        return loc

    model = ensure_valid(RunDocument, _model_input(data), source, translate=translate)
    seen: set[tuple] = set()

    def inherited(path: tuple, key: str) -> bool:
        """A later phase's copy of a key it inherited: reported once, at the first phase."""
        where = (*path[2:], key) if path[:1] == ("schedule",) else None
        if where is None:
            return False
        if where in seen:
            return True
        seen.add(where)
        return False

    check_unknown_keys(model, source, strict=False, translate=lambda path: tuple(translate(path)), skip=inherited,
                       report=lambda message: warnings.warn(message, RunDocumentWarning, stacklevel=4))
    _check_names(model, source)
    _warn_defaults(model, data, source, uid_given)
    return model, data


def load_run_document(path: str | Path) -> tuple[RunDocument, dict]:
    """Read and validate one run document file.

    Args:
        path: a ``run-*.yaml`` written by xgen or a hand-written run document
            (palaestrAI shape). Without ``uid`` the file stem is used.

    Returns:
        ``(model, data)`` as :func:`parse_run_document`.

    Raises:
        DocumentError: unreadable file, YAML syntax error or invalid document
            (file, line and key path in the message).
    """
    return parse_run_document(load_yaml(path))
