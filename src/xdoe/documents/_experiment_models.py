"""The experiment document's pydantic models (the format is described in
:mod:`xdoe.documents._experiment`, which loads and checks it) and its JSON
Schema."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, Strict, field_validator, model_validator

from xdoe.documents._components import AgentBase, Component, PhaseConfigBase, RunConfigBase, Simulation
from xdoe.documents._design_spec import ALL_METHODS
from xdoe.documents._reference import is_reference
from xdoe.documents._validation import DocumentModel, Integer, short_repr, unnamed_component

__all__ = [
    "DEFAULT_MAX_TOTAL_RUNS",
    "DESIGN_METHODS",
    "FACTOR_NAME_PATTERN",
    "UID_PATTERN",
    "LIST_KEYS",
    "NAME_KEYS",
    "SET_KEYS",
    "ExperimentFactor",
    "ExperimentOptionalComponent",
    "ExperimentEnvironmentComponent",
    "ExperimentEnvironment",
    "ExperimentAgent",
    "ExperimentPhaseConfig",
    "ExperimentRunConfig",
    "ExperimentDefinitions",
    "ExperimentPhase",
    "ExperimentDocument",
    "experiment_schema",
]

#: every method the ``design:`` grammar accepts (one list: the grammar's)
DESIGN_METHODS = ALL_METHODS
#: default of ``max_total_runs``: the most runs (design points x repetitions) xgen builds
DEFAULT_MAX_TOTAL_RUNS = 1_000_000
LIST_KEYS = ("environments", "agents")  # levels are lists of keys
NAME_KEYS = ("simulation", "phase_config")  # levels are single keys
SET_KEYS = ("sensors", "actuators")  # per agent, levels are set keys
FACTOR_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
UID_PATTERN = re.compile(r"[A-Za-z0-9_.-]+\Z")


# ------------------------------------------------------------------ pydantic models

#: a number as written: an integer or a float, not a string ("0.5") or a boolean (``true`` is no 1.0)
StrictNumber = Annotated[float, Strict(), Field(allow_inf_nan=False)]


class ExperimentFactor(DocumentModel):
    """A named factor: either categorical ``levels`` or a continuous
    ``range: [low, high]`` with ``scale`` (``linear`` or ``log``) and
    ``integer`` (whole numbers)."""

    levels: list[Any] | None = Field(default=None, min_length=1, description="the values the factor takes")
    range: tuple[StrictNumber, StrictNumber] | None = Field(default=None,
                                                            description="[low, high] of a continuous factor")
    scale: Literal["linear", "log"] = "linear"
    integer: Annotated[bool, Strict()] = False
    when: dict[str, Any] | None = Field(
        default=None, description="factor -> levels: the factor applies only when these hold (xdoe)"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> "ExperimentFactor":
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


class ExperimentOptionalComponent(DocumentModel):
    """A reward, state transformer or run condition in the experiment
    document; an empty ``name`` means none (its keys are still checked for
    typos, unlike a run document's, where an empty name drops the entry)."""

    name: str | None = ""
    params: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _named_or_none(cls, value: Any) -> Any:
        unnamed_component(value)  # raises for settings without a name
        return value


class ExperimentEnvironmentComponent(Component):
    """The ``environment:`` of an environment definition; ``uid`` defaults to the definition key."""

    uid: str | None = Field(default=None, description="environment uid (default: the definition key)")


class ExperimentEnvironment(DocumentModel):
    """One entry of ``definitions.environments``."""

    environment: ExperimentEnvironmentComponent
    reward: ExperimentOptionalComponent | None = None
    state_transformer: ExperimentOptionalComponent | None = None


class ExperimentAgent(AgentBase):
    """One entry of ``definitions.agents`` (its sensors and actuators are the schedule's sets)."""


class ExperimentPhaseConfig(PhaseConfigBase):
    """One entry of ``definitions.phase_config``: ``mode`` is ``train`` or ``test`` as written."""

    mode: Literal["train", "test"] = "train"


class ExperimentRunConfig(RunConfigBase):
    """``definitions.run_config``: its ``condition`` may have an empty name (none)."""

    condition: ExperimentOptionalComponent | None = None


def _id_list(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise ValueError(f"expected a list of sensor/actuator ids, got {short_repr(value)}")
    return [str(v) for v in value]


class ExperimentDefinitions(DocumentModel):
    """``definitions``: the named levels the schedule picks from."""

    environments: dict[str, ExperimentEnvironment] = Field(default_factory=dict)
    agents: dict[str, ExperimentAgent] = Field(default_factory=dict)
    sensors: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    actuators: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    simulation: dict[str, Simulation] = Field(default_factory=dict)
    phase_config: dict[str, ExperimentPhaseConfig] = Field(default_factory=dict)
    run_config: ExperimentRunConfig | None = None

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


def _key_levels(value: Any, what: str) -> list[str]:
    """``value`` as levels: a non-empty list of keys (one key alone is a list of one).

    Raises:
        ValueError: ``expected a non-empty list of WHAT, got ...``.
    """
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(_is_key(k) for k in value):
        raise ValueError(f"expected a non-empty list of {what}, got {short_repr(value)}")
    return value


class ExperimentPhase(DocumentModel):
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
        return None if value is None else _key_levels(value, f"{info.field_name} keys (levels), e.g. [a, b]")

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
            try:
                out[agent] = _key_levels(levels, "set keys")
            except ValueError as exc:
                raise ValueError(f"agent {agent!r}: {exc}") from None
        return out


class ExperimentDocument(DocumentModel):
    """The experiment document (the input of ``xgen``); see the module docstring."""

    model_config = DocumentModel.model_config | {"title": "xdoe experiment document"}

    uid: str = Field(
        min_length=1,
        validation_alias=AliasChoices("uid", "id"),
        description="experiment uid (arsenAI: 'id'); run uids derive from it; printable text without '/', at most 64",
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
    design: str | dict[str, Any] = Field(
        default="auto",
        description="auto | full_factorial | lhs | maximin, or a mapping {method: fractional_factorial | "
        "plackett_burman | central_composite | box_behnken | sobol | halton | d_optimal | morris | saltelli, "
        "<options>} (docs/designs.md); auto: full factorial if it fits max_runs, else maximin",
    )
    factors: dict[str, ExperimentFactor] = Field(default_factory=dict, description="named factors, used as ${name}")
    definitions: ExperimentDefinitions
    schedule: list[dict[str, ExperimentPhase]] = Field(min_length=1, description="phases in order")

    @field_validator("design")
    @classmethod
    def _design(cls, value: Any) -> Any:
        from xdoe.documents._design_spec import parse_design
        from xdoe.errors import DesignError

        try:
            parse_design(value)
        except DesignError as exc:
            raise ValueError(str(exc)) from None
        return value

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
                if not isinstance(name, str) or not FACTOR_NAME_PATTERN.match(name):
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
