"""Checks of a loaded experiment that need the whole document: the schedule's
keys and ``$req`` references against the definitions (building the schedule
variables and each phase's levels), named-factor conditions (``when``) and the
design method against the factor kinds. Each raises :class:`DocumentError`
with ``file:line`` and key path."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from xdoe._levels import repeated_level
from xdoe.documents._experiment_models import LIST_KEYS, NAME_KEYS, SET_KEYS, ExperimentDocument
from xdoe.documents._experiment_types import Experiment, PhaseLevels, Variable
from xdoe.documents._named import resolve_when
from xdoe.documents._reference import Reference, ReferenceSyntaxError, is_reference, parse_reference
from xdoe.documents._validation import did_you_mean, max_factors, short_repr

__all__ = ["check_schedule", "check_conditions", "check_design", "mixed_levels"]


def check_design(experiment: Experiment, model: ExperimentDocument) -> None:
    limit = max_factors()
    if len(experiment.factors) > limit:
        raise experiment.error(
            f"{len(experiment.factors)} factors (named factors and schedule entries with several levels) "
            f"is more than the limit of {limit} factors (building a design of so many takes too long); "
            "use fewer factors, or set XDOE_MAX_FACTORS to raise the limit",
            ("factors",) if "factors" in experiment.data else ("schedule",),
        )
    continuous = [v.name for v in experiment.factors if v.kind == "continuous"]
    if model.design == "full_factorial" and continuous:
        raise experiment.error(
            f"full_factorial needs levels, but {', '.join(continuous)} "
            f"{'is a range factor' if len(continuous) == 1 else 'are range factors'}; "
            "use design: lhs, maximin or auto, or give levels",
            ("design",),
        )


def check_schedule(experiment: Experiment, model: ExperimentDocument) -> None:
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
            if not any(mapping.values()):
                experiment.warnings.append(str(source.error(
                    f"{kind[:-1]} set {set_key!r} names no ids: an agent given it gets no {kind}",
                    ("definitions", kind, set_key))))
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
    agents: set[str] | None = set()  # the agent keys of the phase (None: a reference picks them)
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
            _refuse_duplicates(experiment, levels, path, key)
            plan.entries[key] = levels
            experiment.schedule_variables.append(
                Variable(name=experiment.aliases.get(f"{index}.{key}", f"{index}.{key}"), path=path,
                         levels=tuple(_freeze(levels)))
            )
        given = plan.entries.get("agents")
        if given is not None:
            agents = None if any(is_reference(x) for level in given for x in ([level] if isinstance(level, str)
                                                                               else level)) \
                else {key for level in given for key in level}
        for kind in SET_KEYS:
            mapping = getattr(phase, kind)
            path = plan.path + (kind,)
            if mapping is None:
                plan.sets[kind] = None
                continue
            for agent in sorted((agents or set()) - set(mapping)):
                experiment.warnings.append(str(source.error(
                    f"agent {agent!r} of phase {name!r} has no {kind} set here: it gets every {kind[:-1]} of the "
                    f"phase's environments (give it a set to choose)", path)))
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
                _refuse_duplicates(experiment, levels, path + (agent,), f"{kind} of {agent!r}")
                experiment.schedule_variables.append(
                    Variable(name=experiment.aliases.get(f"{index}.{kind}.{agent}", f"{index}.{kind}.{agent}"),
                             path=path + (agent,), levels=tuple(levels))
                )
            plan.sets[kind] = mapping
        experiment.phases.append(plan)


def check_conditions(experiment: Experiment, model: ExperimentDocument) -> None:
    """Named factors may not clash with named schedule factors; resolve ``when``."""
    named = {v.name for v in experiment.named}
    for v in experiment.schedule_variables:
        if v.name in named:
            raise experiment.error(f"factor name {v.name!r} is also a named factor under 'factors'", v.path)
    variables = {v.name: v for v in experiment.variables}
    # the factors the document names: under `factors:`, and schedule entries given a name
    written = [v.name for v in experiment.named] + [v.name for v in experiment.schedule_variables
                                                    if v.name in set(experiment.aliases.values())]
    for i, v in enumerate(experiment.named):
        when = model.factors[v.name].when
        if when:
            experiment.named[i] = replace(
                v, when=resolve_when(v.name, when, variables, experiment.source, v.path, written=written)
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


def _refuse_duplicates(experiment: Experiment, levels: list, path: tuple, what: str) -> None:
    twice = repeated_level(levels)
    if twice is not None:
        raise experiment.error(f"level {short_repr(twice[1])} of {what} is listed twice (a design would run it "
                               "twice as often as the others)", path + (twice[0],))


def _level_kind(level: Any) -> str:
    if isinstance(level, bool):
        return "a boolean"
    if isinstance(level, (int, float)):
        return "a number"
    if isinstance(level, str):
        return "a string"
    if level is None:
        return "null"
    return "a list" if isinstance(level, list) else "a mapping"


def mixed_levels(levels: Sequence[Any]) -> str | None:
    """``"5 (a number), '10' (a string)"``: the first level of each kind, when
    the levels of one factor are of more than one kind (``[5, "10"]``, ``[0.1,
    true]``, ``[0.1, null]``): legitimate, but mostly a typo that gives a
    component a value of another type in some runs only."""
    first: dict[str, Any] = {}
    for level in levels:
        first.setdefault(_level_kind(level), level)
    if len(first) < 2:
        return None
    return ", ".join(f"{short_repr(level)} ({kind})" for kind, level in first.items())


