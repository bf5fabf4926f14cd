"""The experiment document (the input of xgen): pydantic models and loading.

The format is arsenAI's, accepted as it is, plus xdoe's extensions::

    %YAML 1.2
    ---
    uid: study                  # or arsenAI's "id"
    seed: 42                    # default 0
    version: 3.4.1              # any version text; an unreadable one warns
    output: _outputs            # relative to the working directory
    repetitions: 2              # >= 1
    max_runs: 20                # design points before repetitions; absent or -1: no limit
    max_total_runs: 1000000     # refuse designs of more runs (points x repetitions)  (xdoe)
    design: auto                # auto | full_factorial | lhs | maximin          (xdoe)
    factors:                    # named factors, used as "${name}" in definitions  (xdoe)
      alpha: {levels: [0.1, 0.5]}
      epsilon: {range: [0.01, 0.3], scale: log}          # integer: true for whole numbers
    definitions:
      environments: {key: {environment: {name, uid, params}, reward: {name, params}, state_transformer: {name, params}}}
      agents: {key: {name, brain: {name, params}, muscle: ..., objective: ..., load: ..., replay: ...}}
      sensors: {set key: {environment uid: [id, ...]}}    # ids bare (vm_pu) or full (env.vm_pu)
      actuators: {set key: {environment uid: [id, ...]}}
      simulation: {key: {name, conditions: [{name, params}]}}
      phase_config: {key: {mode, worker, episodes, ...}}
      run_config: {condition: {name, params}}
    schedule:
      - phase name:
          environments: [[env_a], [env_b]]      # levels; a level is a list of environment keys
          agents: [[a1, a2]]
          sensors: {a1: [set1, set2]}           # per agent key, levels of set keys
          actuators: {a1: [act_set]}
          simulation: [s1]
          phase_config: [short, long]
      - next phase: {phase_config: [test]}     # omitted keys are the previous phase's choice

A schedule entry with several levels is a factor named ``<phase index>.<key>``
or ``<phase index>.<sensors|actuators>.<agent key>``; a level may be a
``$req(...)`` reference (:mod:`xdoe.documents._reference`). An entry written
``{name: agent, levels: [...]}`` is called ``agent`` instead, and a named factor
may carry ``when: {factor: [levels]}`` (:mod:`xdoe.documents._named`).

Unknown keys are accepted with a warning (arsenAI documents carry keys xdoe
does not use) unless ``strict=True`` (``xgen --strict``), which refuses them.
Free-form places (``params``, ``phase_config`` and ``run_config`` entries,
``load``, ``replay``) never warn.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, Sequence

from pydantic import AliasChoices, Field, field_validator, model_validator

from xdoe.documents._canonical import canonical_json
from xdoe.documents._named import resolve_when, unwrap_schedule_names
from xdoe.documents._placeholders import PlaceholderError, find_placeholders, substitute
from xdoe.documents._reference import Reference, ReferenceSyntaxError, is_reference, parse_reference
from xdoe.documents._validation import (
    DocumentModel,
    Integer,
    collect_extras,
    did_you_mean,
    ensure_valid,
    refuse_non_finite,
    short_repr,
)
from xdoe.documents._yaml import YamlDocument, load_yaml
from xdoe.errors import DocumentError

__all__ = [
    "DEFAULT_MAX_TOTAL_RUNS",
    "DESIGN_METHODS",
    "ExperimentDocument",
    "FactorSpec",
    "Definitions",
    "SchedulePhase",
    "Experiment",
    "Variable",
    "PhaseLevels",
    "load_experiment",
    "experiment_schema",
    "safe_uid",
]

DESIGN_METHODS = ("auto", "full_factorial", "lhs", "maximin")
#: default of ``max_total_runs``: the most runs (design points x repetitions) xgen builds
DEFAULT_MAX_TOTAL_RUNS = 1_000_000
LIST_KEYS = ("environments", "agents")  # levels are lists of keys
NAME_KEYS = ("simulation", "phase_config")  # levels are single keys
SET_KEYS = ("sensors", "actuators")  # per agent, levels are set keys
_FACTOR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_UID = re.compile(r"[A-Za-z0-9_.-]+\Z")


# ------------------------------------------------------------------ pydantic models


class FactorSpec(DocumentModel):
    """A named factor: either categorical ``levels`` or a continuous
    ``range: [low, high]`` with ``scale`` (``linear`` or ``log``) and
    ``integer`` (whole numbers)."""

    levels: list[Any] | None = Field(default=None, min_length=1, description="the values the factor takes")
    range: tuple[float, float] | None = Field(default=None, description="[low, high] of a continuous factor")
    scale: Literal["linear", "log"] = "linear"
    integer: bool = False
    when: dict[str, Any] | None = Field(
        default=None, description="factor -> levels: the factor applies only when these hold (xdoe)"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> "FactorSpec":
        if (self.levels is None) == (self.range is None):
            raise ValueError("expected exactly one of 'levels: [...]' or 'range: [low, high]'")
        if self.range is not None:
            low, high = self.range
            if not low < high:
                raise ValueError(f"expected range [low, high] with low < high, got [{low}, {high}]")
            if self.scale == "log" and low <= 0:
                raise ValueError(f"a log-scale range needs low > 0, got {low}")
        elif self.scale != "linear" or self.integer:
            raise ValueError("'scale' and 'integer' apply to 'range' factors, not to 'levels'")
        return self


class ComponentDefinition(DocumentModel):
    name: str = Field(min_length=1, description="import path, 'package.module:Class'")
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("params", mode="before")
    @classmethod
    def _none(cls, value: Any) -> Any:
        return {} if value is None else value


class OptionalComponentDefinition(DocumentModel):
    """A reward or state transformer; an empty ``name`` means none."""

    name: str | None = ""
    params: dict[str, Any] | None = None


class EnvironmentComponent(ComponentDefinition):
    uid: str | None = Field(default=None, description="environment uid (default: the definition key)")


class EnvironmentDefinition(DocumentModel):
    environment: EnvironmentComponent
    reward: OptionalComponentDefinition | None = None
    state_transformer: OptionalComponentDefinition | None = None


class AgentDefinition(DocumentModel):
    name: str | None = Field(default=None, description="agent name (default: the definition key)")
    brain: ComponentDefinition
    muscle: ComponentDefinition
    objective: ComponentDefinition
    load: Any = None
    replay: Any = None


class SimulationDefinition(DocumentModel):
    name: str = Field(min_length=1)
    conditions: list[ComponentDefinition] = Field(default_factory=list)

    @field_validator("conditions", mode="before")
    @classmethod
    def _none(cls, value: Any) -> Any:
        return [] if value is None else value


class PhaseConfigDefinition(DocumentModel):
    open_keys: ClassVar[bool] = True

    mode: Literal["train", "test"] = "train"
    worker: Integer = Field(default=1, ge=1)
    episodes: Integer = Field(default=1, ge=1)


class RunConfigDefinition(DocumentModel):
    open_keys: ClassVar[bool] = True

    condition: OptionalComponentDefinition | None = None


def _id_list(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise ValueError(f"expected a list of sensor/actuator ids, got {short_repr(value)}")
    return [str(v) for v in value]


class Definitions(DocumentModel):
    environments: dict[str, EnvironmentDefinition] = Field(default_factory=dict)
    agents: dict[str, AgentDefinition] = Field(default_factory=dict)
    sensors: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    actuators: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    simulation: dict[str, SimulationDefinition] = Field(default_factory=dict)
    phase_config: dict[str, PhaseConfigDefinition] = Field(default_factory=dict)
    run_config: RunConfigDefinition | None = None

    @field_validator("sensors", "actuators", mode="before")
    @classmethod
    def _sets(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"expected a mapping of set keys to {{environment uid: [ids]}}, got {short_repr(value)}")
        out = {}
        for key, mapping in value.items():
            if not isinstance(mapping, dict):
                raise ValueError(f"set {key!r}: expected a mapping {{environment uid: [ids]}}, got {short_repr(mapping)}")
            out[key] = {str(uid): _id_list(ids) for uid, ids in mapping.items()}
        return out


def _is_key(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


class SchedulePhase(DocumentModel):
    """One phase of the schedule; every key is a list of levels, and an
    omitted key takes the previous phase's choice."""

    environments: list[list[str] | str] | None = Field(
        default=None, description="levels; each level a list of environment keys, or a $req(...) reference"
    )
    agents: list[list[str] | str] | None = Field(
        default=None, description="levels; each level a list of agent keys, or a $req(...) reference"
    )
    sensors: dict[str, list[str]] | None = Field(
        default=None, description="per agent key, levels of sensor-set keys (or $req(...))"
    )
    actuators: dict[str, list[str]] | None = Field(
        default=None, description="per agent key, levels of actuator-set keys (or $req(...))"
    )
    simulation: list[str] | None = Field(default=None, description="levels of simulation keys (or $req(...))")
    phase_config: list[str] | None = Field(default=None, description="levels of phase-config keys (or $req(...))")

    @field_validator("environments", "agents", mode="before")
    @classmethod
    def _list_levels(cls, value: Any, info: Any) -> Any:
        what = "environment" if info.field_name == "environments" else "agent"
        example = f"[[{what}_a], [{what}_b]]"
        if value is None:
            return None
        if is_reference(value):
            value = [value]
        if not isinstance(value, list) or not value:
            raise ValueError(f"expected a non-empty list of levels, each a list of {what} keys, e.g. {example}")
        for level in value:
            if is_reference(level):
                continue
            if isinstance(level, str):
                raise ValueError(
                    f"level {level!r} must be a list of {what} keys (e.g. [[{level}]]) or a $req(...) reference"
                )
            if not isinstance(level, list) or not level or not all(_is_key(k) for k in level):
                raise ValueError(f"expected each level to be a non-empty list of {what} keys, got {short_repr(level)}")
        return value

    @field_validator("simulation", "phase_config", mode="before")
    @classmethod
    def _name_levels(cls, value: Any, info: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(_is_key(k) for k in value):
            raise ValueError(
                f"expected a non-empty list of {info.field_name} keys (levels), e.g. [a, b], got {short_repr(value)}"
            )
        return value

    @field_validator("sensors", "actuators", mode="before")
    @classmethod
    def _set_levels(cls, value: Any, info: Any) -> Any:
        if value is None:
            return None
        if is_reference(value):
            raise ValueError(f"{info.field_name}: give a $req(...) per agent, e.g. {{agent: [$req($prev)]}}")
        if not isinstance(value, dict):
            raise ValueError(f"expected a mapping agent key -> list of set keys, got {short_repr(value)}")
        out = {}
        for agent, levels in value.items():
            if isinstance(levels, str):
                levels = [levels]
            if not isinstance(levels, list) or not levels or not all(_is_key(k) for k in levels):
                raise ValueError(f"agent {agent!r}: expected a non-empty list of set keys, got {short_repr(levels)}")
            out[agent] = levels
        return out


class ExperimentDocument(DocumentModel):
    """The experiment document (the input of ``xgen``); see the module docstring."""

    model_config = DocumentModel.model_config | {"title": "xdoe experiment document"}

    uid: str = Field(
        min_length=1,
        validation_alias=AliasChoices("uid", "id"),
        description="experiment uid (arsenAI: 'id'); run uids derive from it; no '/' or '..'",
    )
    seed: Integer = Field(default=0, ge=0, description="root of every random choice")
    version: str | None = Field(default=None, description="document format version, e.g. '1.0' or arsenAI's '3.4.1'")
    output: str = Field(default="_outputs", description="output directory, relative to the working directory")
    repetitions: Integer = Field(default=1, ge=1, description="runs per design point, each with its own seed")
    max_runs: Integer | None = Field(default=None, description="cap on design points (before repetitions); -1: none")
    max_total_runs: Integer = Field(
        default=DEFAULT_MAX_TOTAL_RUNS, ge=1,
        description="refuse a design of more runs (design points x repetitions) than this; "
        "xgen --max-total-runs overrides it",
    )
    design: Literal["auto", "full_factorial", "lhs", "maximin"] = Field(
        default="auto", description="auto: full factorial if it fits max_runs, else maximin"
    )
    factors: dict[str, FactorSpec] = Field(default_factory=dict, description="named factors, used as ${name}")
    definitions: Definitions
    schedule: list[dict[str, SchedulePhase]] = Field(min_length=1, description="phases in order")

    @field_validator("max_runs")
    @classmethod
    def _max_runs(cls, value: int | None) -> int | None:
        if value is None or value == -1:
            return None
        if value < 1:
            raise ValueError(f"expected a positive number of design points, or -1 for no limit, got {value}")
        return value

    @field_validator("factors", mode="before")
    @classmethod
    def _factors(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, dict):
            for name in value:
                if not isinstance(name, str) or not _FACTOR_NAME.match(name):
                    raise ValueError(f"factor name {name!r} must match [A-Za-z_][A-Za-z0-9_.-]*")
        return value

    @field_validator("schedule", mode="before")
    @classmethod
    def _phases(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        if not value:
            raise ValueError("expected at least one phase, the schedule is empty")
        out = []
        for entry in value:
            if not (isinstance(entry, dict) and len(entry) == 1):
                raise ValueError(f"expected each phase as a one-key mapping 'name: {{...}}', got {short_repr(entry)}")
            (name, body), = entry.items()
            out.append({name: {} if body is None else body})
        return out


def experiment_schema() -> dict[str, Any]:
    """The JSON Schema of the experiment document, for editors.

    With the yaml-language-server (VS Code YAML extension, neovim...), save
    it (``xgen schema > xdoe-experiment.schema.json``) and put this comment
    on the document's first line::

        # yaml-language-server: $schema=./xdoe-experiment.schema.json
    """
    schema = ExperimentDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


# ------------------------------------------------------------------ the loaded experiment


@dataclass(frozen=True)
class Variable:
    """One schedule entry or named factor.

    A variable with more than one level, or a range, is a factor; with one
    level it is a control variable (constant in every run).

    Attributes:
        name: ``<phase index>.<key>``, ``<phase index>.<sensors|actuators>.<agent>``
            or the named factor's name.
        path: key path of its definition in the document (for errors).
        levels: the levels, or ``None`` for a range.
        low, high, scale, integer: the range of a continuous factor.
    """

    name: str
    path: tuple
    levels: tuple | None = None
    low: float | None = None
    high: float | None = None
    scale: str = "linear"
    integer: bool = False
    #: ``((factor, (level, ...)), ...)``: applies only when every factor takes one of its levels
    when: tuple = ()

    @property
    def is_factor(self) -> bool:
        return self.levels is None or len(self.levels) > 1

    @property
    def kind(self) -> str:
        return "continuous" if self.levels is None else "categorical"

    def representatives(self) -> list[Any]:
        """Values used to check the definitions: every level, or the range ends."""
        if self.levels is not None:
            return list(self.levels)
        low, high = self.low, self.high
        if self.integer:
            import math

            return [math.ceil(low), math.floor(high)]  # type: ignore[arg-type]
        return [low, high]


@dataclass
class PhaseLevels:
    """One phase's levels as written (``None`` = inherited from the previous phase).

    ``entries`` maps environments/agents/simulation/phase_config to their
    levels; ``sets`` maps sensors/actuators to ``{agent key: levels}``.
    """

    index: int
    name: str
    entries: dict[str, list | None]
    sets: dict[str, dict[str, list] | None]

    @property
    def path(self) -> tuple:
        return ("schedule", self.index, self.name)


@dataclass
class Experiment:
    """A loaded, validated experiment document.

    Attributes:
        model: the pydantic model (checked with representative factor values).
        data: the document as plain data (definitions still hold ``${name}``).
        source: the loaded YAML (line numbers).
        input_sha256: sha256 of the file's bytes (of the canonical JSON for data).
        warnings: ``file:line: key: message`` texts.
        named: the named factors and constants, in document order.
        schedule_variables: the schedule entries, in phase and key order.
        phases: the phases' levels.
    """

    model: ExperimentDocument
    data: dict
    source: YamlDocument
    input_sha256: str
    warnings: list[str]
    named: list[Variable]
    schedule_variables: list[Variable]
    phases: list[PhaseLevels]
    references: dict[str, Reference] = field(default_factory=dict)
    #: ``{positional name: given name}`` of the schedule factors named in the document
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def uid(self) -> str:
        return self.model.uid

    @property
    def safe_uid(self) -> str:
        return safe_uid(self.model.uid)

    @property
    def file(self) -> str:
        return self.source.file

    @property
    def definitions(self) -> dict:
        return self.data.get("definitions") or {}

    @property
    def variables(self) -> list[Variable]:
        """Schedule entries then named factors (the order of design columns)."""
        return [*self.schedule_variables, *self.named]

    @property
    def factors(self) -> list[Variable]:
        return [v for v in self.variables if v.is_factor]

    def error(self, message: str, path: Sequence[str | int] = ()) -> DocumentError:
        return self.source.error(message, path)

    def reference(self, text: str) -> Reference:
        return self.references[text]

    def phase_names(self) -> list[str]:
        return [p.name for p in self.phases]


def safe_uid(uid: str) -> str:
    """``uid`` with every character outside ``[A-Za-z0-9_.-]`` replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", uid)


def _warn_or_fail(message: str, path: tuple, source: YamlDocument, strict: bool, warnings: list[str]) -> None:
    err = source.error(message, path)
    if strict:
        raise err
    warnings.append(str(err))


def _check_placeholders(data: dict, source: YamlDocument, named: dict[str, Variable]) -> set[str]:
    used: set[str] = set()
    for section in data:
        if section in ("definitions", "factors"):
            continue
        try:
            for path, name, _whole in find_placeholders(data[section], (section,)):
                raise source.error(f"'${{{name}}}' is only allowed inside definitions", path)
        except PlaceholderError as exc:
            raise source.error(str(exc), getattr(exc, "path", (section,))) from None
    try:
        for path, name, whole in find_placeholders(data.get("definitions"), ("definitions",)):
            if name not in named:
                raise source.error(f"unknown factor '${{{name}}}': {did_you_mean(name, named)}", path)
            if not whole:
                for level in named[name].representatives():
                    if isinstance(level, (list, dict)):
                        raise source.error(
                            f"factor {name!r} has a {type(level).__name__} level, which cannot be "
                            "interpolated into a string; use the whole string '${" + name + "}'",
                            path,
                        )
            used.add(name)
    except PlaceholderError as exc:
        raise source.error(str(exc), getattr(exc, "path", ("definitions",))) from None
    return used


def _named_variables(model_factors: dict[str, FactorSpec]) -> dict[str, Variable]:
    out: dict[str, Variable] = {}
    for name, spec in model_factors.items():
        path = ("factors", name)
        if spec.levels is not None:
            out[name] = Variable(name=name, path=path, levels=tuple(spec.levels))
        else:
            low, high = spec.range  # type: ignore[misc]
            if spec.integer:
                import math

                if math.ceil(low) > math.floor(high):
                    raise ValueError(f"factor {name!r}: range [{low}, {high}] holds no integer")
            out[name] = Variable(
                name=name, path=path, low=float(low), high=float(high), scale=spec.scale, integer=spec.integer
            )
    return out


def _factor_specs(data: dict, source: YamlDocument) -> dict[str, FactorSpec]:
    raw = data.get("factors")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise source.error(
            "expected a mapping of factor names to {levels: [...]} or {range: [low, high]}, "
            f"got {short_repr(raw)}",
            ("factors",),
        )
    specs: dict[str, FactorSpec] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not _FACTOR_NAME.match(name):
            raise source.error(f"factor name {name!r} must match [A-Za-z_][A-Za-z0-9_.-]*", ("factors", name))
        if not isinstance(spec, dict):
            raise source.error(
                f"expected {{levels: [...]}} or {{range: [low, high]}}, got {short_repr(spec)}", ("factors", name)
            )
        specs[name] = ensure_valid(
            FactorSpec, spec, source, translate=lambda loc, name=name: ("factors", name, *loc)
        )
    return specs


def _validate_with(values: dict[str, Any], data: dict, source: YamlDocument) -> ExperimentDocument:
    concrete = dict(data)
    if "definitions" in data:
        concrete["definitions"] = substitute(data["definitions"], values) if values else data["definitions"]
    return ensure_valid(ExperimentDocument, concrete, source)


def _looks_like_run(data: dict) -> bool:
    """Whether ``data`` has the shape of a run document (xgen's output, or a
    hand-written palaestrAI one: phases list environment entries, not references)."""
    if "experiment_uid" in data or "design_point" in data:
        return True
    schedule = data.get("schedule")
    for entry in schedule if isinstance(schedule, list) else []:
        body = next(iter(entry.values()), None) if isinstance(entry, dict) and len(entry) == 1 else None
        envs = body.get("environments") if isinstance(body, dict) else None
        if isinstance(envs, list) and any(isinstance(e, dict) and "environment" in e for e in envs):
            return True
    return False


def _validate_levels(
    named: dict[str, Variable], used: set[str], base: dict[str, Any], data: dict, source: YamlDocument
) -> None:
    """Validate the definitions with each level of each used factor (the
    other factors at their first level). Only the definition entries that
    use the factor are validated again, so the cost grows with the levels
    times the size of those entries, not of the whole document."""
    definitions = data.get("definitions")
    if not isinstance(definitions, dict):
        return
    sites: dict[str, set[tuple]] = {}
    for path, name, _whole in find_placeholders(definitions, ("definitions",)):
        sites.setdefault(name, set()).add(tuple(path[1:3]) if len(path) > 3 else tuple(path[1:2]))
    for name in sorted(used):
        values = named[name].representatives()[1:]
        subset: dict[str, Any] = {}
        for entry in sorted(sites.get(name, ()), key=len):
            section = definitions.get(entry[0])
            if len(entry) == 1 or not isinstance(section, dict):
                subset[entry[0]] = section  # the whole section (sorted first)
            elif subset.get(entry[0]) is not section:
                subset.setdefault(entry[0], {})[entry[1]] = section[entry[1]]
        for value in values:
            try:
                ensure_valid(
                    Definitions, substitute(subset, {**base, name: value}), source,
                    translate=lambda loc: ("definitions", *loc),
                )
            except DocumentError as exc:
                raise DocumentError(
                    f"{exc.message} (with factor {name!r} = {short_repr(value)})",
                    file=exc.file,
                    line=exc.line,
                    key_path=exc.key_path,
                ) from None


def load_experiment(
    document: str | Path | dict | YamlDocument,
    *,
    strict: bool = False,
    text: str | None = None,
    file: str | None = None,
) -> Experiment:
    """Load and validate an experiment document.

    Args:
        document: a path, plain data (a dict) or a loaded :class:`YamlDocument`.
        strict: refuse unknown keys instead of warning about them.
        text: the document text (then ``document`` is only the file name).
        file: the name used in messages (default: the path, or ``<string>``).

    Returns:
        The :class:`Experiment`; ``warnings`` lists what was accepted with a
        warning (unknown keys, a ``$req(`` without ``)``, unused factors...).

    Raises:
        DocumentError: anything invalid, with file, line, key path and what
            was expected; an undefined key lists the defined ones ("did you mean").
    """
    if isinstance(document, YamlDocument):
        source = document
        digest = hashlib.sha256(canonical_json(source.data).encode()).hexdigest()
    elif isinstance(document, dict):
        source = YamlDocument(data=document, file=file or "<string>")
        digest = hashlib.sha256(canonical_json(document).encode()).hexdigest()
    else:
        name = file or str(document)
        if text is None:
            try:
                raw = Path(document).read_bytes()
            except FileNotFoundError:
                raise DocumentError("file not found", file=name) from None
            except IsADirectoryError:
                raise DocumentError("is a directory, not a document", file=name) from None
            except OSError as exc:
                raise DocumentError(f"cannot read: {exc}", file=name) from None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DocumentError(f"not UTF-8 text: {exc}", file=name) from None
        else:
            raw = text.encode("utf-8")
        digest = hashlib.sha256(raw).hexdigest()
        source = load_yaml(document, text=text, file=name)

    data = source.data
    if not isinstance(data, dict):
        got = "an empty document" if data is None else f"a {type(data).__name__}"
        raise source.error(f"expected a mapping (uid, definitions, schedule...) at the top level, got {got}")
    if "definitions" not in data and _looks_like_run(data):
        raise source.error(f"this is a run document: run it with `xrun experiment-start {source.file}` "
                           f"(check it with `xrun experiment-check {source.file}`); xgen reads experiment documents")
    refuse_non_finite(source)
    data, aliases = unwrap_schedule_names(data, source)
    warnings: list[str] = []

    # named factors first: their values are needed to check the definitions
    try:
        named = _named_variables(_factor_specs(data, source))
    except ValueError as exc:
        raise source.error(str(exc), ("factors",)) from None

    schedule = data.get("schedule")
    if isinstance(schedule, list):
        for i, entry in enumerate(schedule):
            if not (isinstance(entry, dict) and len(entry) == 1):
                raise source.error(
                    f"expected each phase as a one-key mapping 'name: {{...}}', got {short_repr(entry)}",
                    ("schedule", i),
                )

    used = _check_placeholders(data, source, named)
    for name, var in named.items():
        if name not in used:
            warnings.append(str(source.error(f"factor {name!r} is not used in definitions", var.path)))

    # validate with every factor at its first level, then each level of each factor
    base = {name: var.representatives()[0] for name, var in named.items()}
    model = _validate_with(base, data, source)
    _validate_levels(named, used, base, data, source)

    for path, key in collect_extras(model):
        if path == () and key == "id" and "uid" not in data:
            continue
        _warn_or_fail(f"unknown key {key!r} (xdoe does not use it)", path + (key,), source, strict, warnings)

    uid_key = "uid" if "uid" in data else "id"
    if "/" in model.uid or "\\" in model.uid or ".." in model.uid:
        raise source.error(f"the uid must not contain '/', '\\' or '..' (it names files), got {model.uid!r}", (uid_key,))
    if not _UID.match(model.uid):
        warnings.append(
            str(source.error(f"uid {model.uid!r} has characters unsafe in file names; run files use {safe_uid(model.uid)!r}", (uid_key,)))
        )
    if model.version is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", model.version.strip()):
        warnings.append(str(source.error(f"unreadable version {model.version!r} (expected e.g. 1.0 or 3.4.1)", ("version",))))

    experiment = Experiment(
        model=model,
        data=data,
        source=source,
        input_sha256=digest,
        warnings=warnings,
        named=list(named.values()),
        schedule_variables=[],
        phases=[],
        aliases=aliases,
    )
    _check_schedule(experiment, model)
    _check_conditions(experiment, model)
    _check_design(experiment, model)
    return experiment


def _check_design(experiment: Experiment, model: ExperimentDocument) -> None:
    continuous = [v.name for v in experiment.factors if v.kind == "continuous"]
    if model.design == "full_factorial" and continuous:
        raise experiment.error(
            f"full_factorial needs levels, but {', '.join(continuous)} "
            f"{'is a range factor' if len(continuous) == 1 else 'are range factors'}; "
            "use design: lhs, maximin or auto, or give levels",
            ("design",),
        )


def _check_schedule(experiment: Experiment, model: ExperimentDocument) -> None:
    source = experiment.source
    defs = model.definitions
    known = {
        "environments": defs.environments,
        "agents": defs.agents,
        "simulation": defs.simulation,
        "phase_config": defs.phase_config,
        "sensors": defs.sensors,
        "actuators": defs.actuators,
    }
    env_uids = {(d.environment.uid or key) for key, d in defs.environments.items()}
    for kind in SET_KEYS:
        for set_key, mapping in known[kind].items():
            for uid in mapping:
                if uid not in env_uids:
                    experiment.warnings.append(
                        str(
                            source.error(
                                f"{kind[:-1]} set {set_key!r} names environment uid {uid!r}, which no environment "
                                f"has ({did_you_mean(uid, env_uids)}); its ids are never used",
                                ("definitions", kind, set_key, uid),
                            )
                        )
                    )

    names: list[str] = []
    for index, entry in enumerate(model.schedule):
        (name, phase), = entry.items()
        if name in names:
            raise source.error(
                f"duplicate phase name {name!r} (phase {names.index(name)} has it too); phase names must be unique",
                ("schedule", index, name),
            )
        names.append(name)
        plan = PhaseLevels(index=index, name=name, entries={}, sets={})
        for key in (*LIST_KEYS, *NAME_KEYS):
            levels = getattr(phase, key)
            path = plan.path + (key,)
            if levels is None:
                if index == 0:
                    raise source.error(f"the first phase must give {key!r} (later phases inherit it)", plan.path)
                plan.entries[key] = None
                continue
            for li, level in enumerate(levels):
                items = [level] if isinstance(level, str) else level
                for item in items:
                    if is_reference(item):
                        _check_reference(experiment, item, index, key, names, path + (li,), whole=isinstance(level, str))
                    elif item not in known[key]:
                        raise source.error(
                            f"undefined {_singular(key)} {item!r}: {did_you_mean(item, known[key])}", path + (li,)
                        )
            plan.entries[key] = levels
            experiment.schedule_variables.append(
                Variable(name=experiment.aliases.get(f"{index}.{key}", f"{index}.{key}"), path=path,
                         levels=tuple(_freeze(levels)))
            )
        for kind in SET_KEYS:
            mapping = getattr(phase, kind)
            path = plan.path + (kind,)
            if mapping is None:
                plan.sets[kind] = None
                continue
            for agent, levels in mapping.items():
                if agent not in defs.agents:
                    raise source.error(f"undefined agent {agent!r}: {did_you_mean(agent, defs.agents)}", path + (agent,))
                for li, level in enumerate(levels):
                    if is_reference(level):
                        ref = _check_reference(experiment, level, index, kind, names, path + (agent, li), whole=True)
                        if ref.index is not None:
                            raise source.error(f"{ref.text}: index= does not apply to {kind} sets", path + (agent, li))
                    elif level not in known[kind]:
                        raise source.error(
                            f"undefined {kind[:-1]} set {level!r}: {did_you_mean(level, known[kind])}",
                            path + (agent, li),
                        )
                experiment.schedule_variables.append(
                    Variable(name=experiment.aliases.get(f"{index}.{kind}.{agent}", f"{index}.{kind}.{agent}"),
                             path=path + (agent,), levels=tuple(levels))
                )
            plan.sets[kind] = mapping
        experiment.phases.append(plan)


def _check_conditions(experiment: Experiment, model: ExperimentDocument) -> None:
    """Named factors may not clash with named schedule factors; resolve ``when``."""
    named = {v.name for v in experiment.named}
    for v in experiment.schedule_variables:
        if v.name in named:
            raise experiment.error(f"factor name {v.name!r} is also a named factor under 'factors'", v.path)
    variables = {v.name: v for v in experiment.variables}
    for i, v in enumerate(experiment.named):
        when = model.factors[v.name].when
        if when:
            experiment.named[i] = replace(
                v, when=resolve_when(v.name, when, variables, experiment.source, v.path)
            )


def _freeze(levels: list) -> list:
    return [level if isinstance(level, str) else list(level) for level in levels]


def _singular(key: str) -> str:
    return {"environments": "environment", "agents": "agent", "simulation": "simulation", "phase_config": "phase config"}[
        key
    ]


def _check_reference(
    experiment: Experiment, text: str, phase: int, key: str, names: list[str], path: tuple, *, whole: bool
) -> Reference:
    source = experiment.source
    try:
        ref = parse_reference(text)
    except ReferenceSyntaxError as exc:
        raise source.error(f"malformed reference {text!r}: {exc} (at column {exc.column + 1})", path) from None
    try:
        ref.target_index(phase, names)
    except ValueError as exc:
        raise source.error(str(exc), path) from None
    if ref.unclosed and text not in experiment.references:
        experiment.warnings.append(
            str(source.error(f"reference {text!r} lacks its closing parenthesis; read as '{ref.text})'", path))
        )
    if ref.index is not None and key in NAME_KEYS:
        raise source.error(f"{ref.text}: index= does not apply to {key} (it picks one key, not a list)", path)
    experiment.references[text] = ref
    return ref
