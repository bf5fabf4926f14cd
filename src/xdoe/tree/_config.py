"""The session config of ``xrun grow``: what to grow and how.

.. code-block:: yaml

    uid: taxi-grow                    # the tree's name (default: the root's run uid)
    root: taxi-root.yaml              # a run document, an experiment document that
                                      # expands into one run (paths relative to this
                                      # file), or an inline run document (a mapping)
    output: _outputs/taxi-grow        # run folder for the documents (default _outputs)
    segment: {episodes: 300}          # or {steps: N}: the length of every session
    phase: training                   # the phase the segment length applies to
    criterion: {name: ImprovementCriterion, params: {delta: 0.5, last: 100}}
    goal: {threshold: 7.0, last: 100} # ThresholdCriterion params, or {name, params}
    directions:                       # tried in order when a branch dies
      - {brain.params.alpha: 0.5}
      - {brain.params.alpha: x0.5, muscle.params.epsilon: x0.5}
    limits: {max_sessions: 20, max_depth: 10, max_parallel: 1}

Errors name ``file:line`` and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from xdoe.documents import DocumentModel, empty_list, ensure_valid, uid_file_name
from xdoe.errors import InputError
from xdoe.tree._criteria import HealthCriterion, ImprovementCriterion, make_criterion
from xdoe.tree._overrides import Override, apply_overrides, parse_value

__all__ = ["SessionConfig", "load_session_config", "Limits"]


class Limits(DocumentModel):
    max_sessions: int = Field(default=20, ge=1)
    max_depth: int = Field(default=10, ge=1)
    max_parallel: int = Field(default=1, ge=1)


class _Segment(DocumentModel):
    episodes: int | None = Field(default=None, ge=1)
    steps: int | None = Field(default=None, ge=1)


class _ConfigModel(DocumentModel):
    uid: str | None = None
    root: str | dict[str, Any]
    output: str = "_outputs"
    segment: _Segment = Field(default_factory=_Segment)
    phase: str | None = None
    criterion: dict[str, Any] | None = None
    goal: dict[str, Any] | None = None
    directions: list[dict[str, Any]] = Field(default_factory=empty_list)
    limits: Limits = Field(default_factory=Limits)


@dataclass
class SessionConfig:
    """A loaded session config: the root run document (``root``, written to
    ``root_file`` when it did not come from a run-document file), the
    segment, criteria, directions (lists of overrides) and limits.
    ``shape`` is the part of the config that determines the tree (a
    restarted grow must have the same; limits may change)."""

    uid: str
    root: dict[str, Any]
    root_file: Path
    write_root: bool
    output: Path
    episodes: int | None
    steps: int | None
    phase: str | None
    criterion: HealthCriterion
    goal: HealthCriterion | None
    directions: list[list[Override]]
    limits: Limits
    shape: dict[str, Any] = field(default_factory=dict)


def _root_document(value: str | dict[str, Any], base: Path, source: Any) -> tuple[dict[str, Any], Path | None]:
    from xdoe.documents import load_yaml, parse_run_document

    if isinstance(value, dict):
        _, data = parse_run_document(value, file=f"{source.file} (root)")
        return data, None
    path = (base / value) if not Path(value).is_absolute() else Path(value)
    loaded = load_yaml(path)
    if isinstance(loaded.data, dict) and "definitions" in loaded.data:
        from xdoe.design.runfiles import generate

        runs = generate(loaded).runs
        if len(runs) != 1:
            raise source.error(f"experiment document {path} expands into {len(runs)} runs; "
                               "a tree grows from one (set repetitions: 1 and one level per factor)",
                               ("root",))
        _, data = parse_run_document(runs[0], file=str(path))
        return data, None
    _, data = parse_run_document(loaded)
    return data, path


def load_session_config(path: str | Path) -> SessionConfig:
    """Read and check a session config (the root document and every
    direction's keys are checked against the root document).

    Raises:
        DocumentError: ``file:line`` and key of the first problem.
    """
    from xdoe.documents import load_yaml

    source = load_yaml(path)
    model: _ConfigModel = ensure_valid(_ConfigModel, source.data, source)
    base = Path(path).resolve().parent
    root, root_path = _root_document(model.root, base, source)
    uid = model.uid or str(root["uid"])
    output = Path(model.output)
    if model.segment.episodes is not None and model.segment.steps is not None:
        raise source.error("give episodes or steps, not both", ("segment",))

    def criterion(value: dict[str, Any] | None, key: str, default: HealthCriterion | None) -> HealthCriterion | None:
        if value is None:
            return default
        spec = value if "name" in value else {"name": "ThresholdCriterion", "params": value}
        try:
            return make_criterion(spec, key)
        except InputError as exc:
            raise source.error(str(exc), (key,)) from None

    directions: list[list[Override]] = []
    for i, entry in enumerate(model.directions):
        overrides = [Override(str(k).lstrip("+"), parse_value(v), str(k).startswith("+"))
                     for k, v in entry.items()]
        try:
            apply_overrides(root, overrides)
        except InputError as exc:
            raise source.error(str(exc), ("directions", i)) from None
        directions.append(overrides)
    names = [next(iter(e)) for e in root["schedule"]]
    if model.phase is not None and model.phase not in names:
        raise source.error(f"no phase {model.phase!r} in the root document; its phases: "
                           f"{', '.join(names)}", ("phase",))
    shape = {"root": root, "segment": model.segment.model_dump(), "phase": model.phase,
             "criterion": model.criterion, "goal": model.goal, "directions": model.directions}
    return SessionConfig(
        uid=uid, root=root, root_file=root_path or output / f"run-{uid_file_name(root['uid'])}.yaml",
        write_root=root_path is None, output=output, episodes=model.segment.episodes,
        steps=model.segment.steps, phase=model.phase,
        criterion=criterion(model.criterion, "criterion", ImprovementCriterion()),  # type: ignore[arg-type]
        goal=criterion(model.goal, "goal", None), directions=directions, limits=model.limits,
        shape=shape)
