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
    design: auto                # auto | full_factorial | lhs | maximin, or {method: ..., <options>} (xdoe)
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
does not use) unless ``strict=True`` (``xgen --strict``), which refuses them;
a key a few edits from a key valid at its place (``repetitons``) is an error
with "did you mean" in every mode
(:func:`~xdoe.documents._validation.check_unknown_keys`, the same check as
run documents'). Free-form places (``params``, ``phase_config`` and
``run_config`` entries, ``load``, ``replay``) never warn, but refuse typos.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Sequence

from xdoe.documents._canonical import canonical_json
from xdoe.documents._experiment_models import (
    DEFAULT_MAX_TOTAL_RUNS,
    DESIGN_METHODS,
    FACTOR_NAME_PATTERN,
    LIST_KEYS,
    NAME_KEYS,
    SET_KEYS,
    UID_PATTERN,
    ExperimentDefinitions,
    ExperimentDocument,
    ExperimentFactor,
    ExperimentPhase,
    experiment_schema,
)
from xdoe.documents._experiment_types import Experiment, PhaseLevels, Variable
from xdoe.documents._identifiers import safe_uid
from xdoe.documents._identifiers import experiment_uid_problem, name_problem
from xdoe.documents._named import unwrap_schedule_names
from xdoe.documents._placeholders import PlaceholderError, bare_names, find_placeholders, substitute
from xdoe._levels import repeated_level
from xdoe.documents._schedule_checks import mixed_levels, check_conditions, check_design, check_schedule
from xdoe.documents._storable import refuse_unstorable
from xdoe.documents._validation import check_unknown_keys, did_you_mean, ensure_valid, max_factors, short_repr
from xdoe.documents._yaml import YamlDocument, load_yaml, read_bytes
from xdoe.errors import DocumentError

__all__ = [
    "DEFAULT_MAX_TOTAL_RUNS",
    "DESIGN_METHODS",
    "LIST_KEYS",
    "NAME_KEYS",
    "SET_KEYS",
    "ExperimentDocument",
    "ExperimentFactor",
    "ExperimentDefinitions",
    "ExperimentPhase",
    "Experiment",
    "Variable",
    "PhaseLevels",
    "load_experiment",
    "experiment_schema",
]

#: The keys of an experiment document that change the study and are read at one place only: the top
#: level's and ``definitions``' sections. Written anywhere else they would be dropped with a warning and
#: the study run without them, so :func:`check_unknown_keys` refuses them there, naming their place.
_SECTIONS = {**{key: "the top level" for key in ("seed", "repetitions", "max_runs", "max_total_runs", "design", "factors",
                                     "definitions", "schedule")},
             **{key: f"definitions.{key}" for key in ("environments", "agents", "sensors", "actuators",
                                                       "simulation", "phase_config", "run_config")}}


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


def _named_variables(model_factors: dict[str, ExperimentFactor]) -> dict[str, Variable]:
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


def _factor_specs(data: dict, source: YamlDocument) -> dict[str, ExperimentFactor]:
    raw = data.get("factors")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise source.error(
            "expected a mapping of factor names to {levels: [...]} or {range: [low, high]}, "
            f"got {short_repr(raw)}",
            ("factors",),
        )
    limit = max_factors()
    if len(raw) > limit:
        raise source.error(
            f"{len(raw)} factors is more than the limit of {limit} factors (building a design of so many "
            "takes too long); use fewer factors, or set XDOE_MAX_FACTORS to raise the limit",
            ("factors",),
        )
    specs: dict[str, ExperimentFactor] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not FACTOR_NAME_PATTERN.match(name):
            raise source.error(f"factor name {name!r} must match [A-Za-z_][A-Za-z0-9_.-]*", ("factors", name))
        if not isinstance(spec, dict):
            raise source.error(
                f"expected {{levels: [...]}} or {{range: [low, high]}}, got {short_repr(spec)}", ("factors", name)
            )
        specs[name] = ensure_valid(
            ExperimentFactor, spec, source, translate=lambda loc, name=name: ("factors", name, *loc)
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
                    ExperimentDefinitions, substitute(subset, {**base, name: value}), source,
                    translate=lambda loc: ("definitions", *loc),
                )
            except DocumentError as exc:
                raise DocumentError(
                    f"{exc.message} (with factor {name!r} = {short_repr(value)})",
                    file=exc.file,
                    line=exc.line,
                    key_path=exc.key_path,
                ) from None


def _check_names(model: ExperimentDocument, source: YamlDocument) -> None:
    """Refuse phase names, agent names and environment uids outside
    :func:`~xdoe.documents._identifiers.name_problem`'s rules (they name
    files and store keys), as the run documents would."""
    for i, entry in enumerate(model.schedule):
        for name in entry:
            problem = name_problem(name, "phase name")
            if problem is not None:
                raise source.error(problem, ("schedule", i, name))
    for key, env in model.definitions.environments.items():
        uid = env.environment.uid if env.environment.uid is not None else key
        problem = name_problem(uid, "environment uid")
        if problem is not None:
            where = ("environment", "uid") if env.environment.uid is not None else ()
            raise source.error(problem, ("definitions", "environments", key, *where))
    for key, agent in model.definitions.agents.items():
        problem = name_problem(agent.name if agent.name is not None else key, "agent name")
        if problem is not None:
            raise source.error(problem, ("definitions", "agents", key, *(("name",) if agent.name is not None else ())))


def load_experiment(
    document: str | Path | dict | YamlDocument,
    *,
    strict: bool = False,
    text: str | None = None,
    file: str | None = None,
    overrides: Sequence[Any] = (),
) -> Experiment:
    """Load and validate an experiment document.

    Args:
        document: a path, plain data (a dict) or a loaded :class:`YamlDocument`.
        strict: refuse unknown keys instead of warning about them.
        text: the document text (then ``document`` is only the file name).
        file: the name used in messages (default: the path, or ``<string>``).
        overrides: ``KEY=VALUE`` texts or :class:`~xdoe.documents._overrides.Override`
            applied in order to the document as loaded (dotted keys, values as
            YAML: the grammar of ``xrun branch --set``); ``input_sha256`` stays
            the hash of the document as written, line numbers point at the file,
            and :attr:`Experiment.overrides` records them (:func:`override_record`).

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
            raw = read_bytes(document)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DocumentError(f"not UTF-8 text: {exc}", file=name) from None
        else:
            raw = text.encode("utf-8")
        digest = hashlib.sha256(raw).hexdigest()
        source = load_yaml(document, text=text, file=name)

    record: list[str] = []
    several: list[str] = []  # overrides whose key ends at more than one place: said, not silent
    if overrides:
        from xdoe.documents._overrides import apply_overrides, override_record

        if not isinstance(source.data, dict):
            raise source.error("overrides need a mapping at the top level of the document")
        record = override_record(overrides)
        changed, applied = apply_overrides(source.data, list(overrides), what=f"the experiment document {source.file}")
        overridden = tuple((path, spec) for spec, done in zip(record, applied) for path in done["paths"])
        several = [f"{source.file}: {spec} sets {len(done['paths'])} places: {', '.join(done['paths'])}"
                   for spec, done in zip(record, applied) if len(done["paths"]) > 1]
        source = YamlDocument(data=changed, file=source.file, tree=source.tree, overridden=overridden)
    data = source.data
    if not isinstance(data, dict):
        got = "an empty document" if data is None else f"a {type(data).__name__}"
        raise source.error(f"expected a mapping (uid, definitions, schedule...) at the top level, got {got}")
    if "definitions" not in data and _looks_like_run(data):
        raise source.error(f"this is a run document: run it with `xrun experiment-start {source.file}` "
                           f"(check it with `xrun experiment-check {source.file}`); xgen reads experiment documents")
    refuse_unstorable(source)
    data, aliases = unwrap_schedule_names(data, source)
    warnings: list[str] = list(several)

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
    for path, name in bare_names(data.get("definitions"), ("definitions",)):
        if name in named:
            warnings.append(str(source.error(f"'${name}' stays as written: a placeholder of factor {name!r} is "
                                             f"'${{{name}}}'", path)))
    for name, var in named.items():
        if name not in used:
            warnings.append(str(source.error(f"factor {name!r} is not used in definitions", var.path)))
        twice = repeated_level(var.levels or ())
        if twice is not None:
            raise source.error(f"factor {name!r} lists level {short_repr(twice[1])} twice (a design would run it "
                               "twice as often as the others)", var.path + ("levels", twice[0]))
        mixed = mixed_levels(var.levels or ())
        if mixed:
            warnings.append(str(source.error(f"factor {name!r} mixes kinds of levels: {mixed} (a quoted number is "
                                             "a string, true/false are no numbers)", var.path + ("levels",))))

    # validate with every factor at its first level, then each level of each factor
    base = {name: var.representatives()[0] for name, var in named.items()}
    model = _validate_with(base, data, source)
    _validate_levels(named, used, base, data, source)

    check_unknown_keys(model, source, strict=strict, report=warnings.append,
                       skip=lambda path, key: path == () and key == "id" and "uid" not in data,
                       sections=_SECTIONS)

    uid_key = "uid" if "uid" in data else "id"
    problem = experiment_uid_problem(model.uid)
    if problem is not None:
        raise source.error(problem, (uid_key,))
    if not UID_PATTERN.match(model.uid):
        warnings.append(
            str(source.error(f"uid {model.uid!r} has characters unsafe in file names; run files use {safe_uid(model.uid)!r}", (uid_key,)))
        )
    _check_names(model, source)
    if model.version is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", model.version.strip()):
        warnings.append(str(source.error(f"unreadable version {model.version!r} (expected e.g. 1.0 or 3.4.1)", ("version",))))

    experiment = Experiment(
        model=model,
        data=data,
        source=source,
        input_sha256=digest,
        warnings=warnings,
        overrides=record,
        named=list(named.values()),
        schedule_variables=[],
        phases=[],
        aliases=aliases,
    )
    check_schedule(experiment, model)
    check_conditions(experiment, model)
    check_design(experiment, model)
    return experiment

