"""The loaded experiment: its variables (schedule entries and named factors),
each phase's levels as written, and the :class:`Experiment` that xgen expands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from xdoe.documents._experiment_models import ExperimentDocument
from xdoe.documents._identifiers import safe_uid
from xdoe.documents._reference import Reference
from xdoe.documents._yaml import YamlDocument
from xdoe.errors import DocumentError

__all__ = ["Variable", "PhaseLevels", "Experiment"]


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
    #: the command-line overrides applied, as ``KEY=VALUE`` texts in the order given
    #: (:func:`xdoe.documents._overrides.override_record`); empty without any
    overrides: list[str] = field(default_factory=list)

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
