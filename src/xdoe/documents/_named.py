"""Readable names for schedule factors and conditions on named factors (xdoe).

A schedule entry may be written ``{name: NAME, levels: [...]}`` instead of a
bare list of levels; the factor is then called ``NAME`` (in ``design.csv``,
run documents' ``design_point.levels``, exports, analysis and plots) instead of
arsenAI's positional ``<phase index>.<key>``, which stays the default::

    schedule:
      - training:
          agents: {name: agent, levels: [[learner], [random]]}
          sensors: {learner: {name: observation, levels: [all, partial]}}

A named factor may apply only when other factors take certain levels::

    factors:
      alpha: {levels: [0.1, 0.5], when: {agent: [learner]}}

``when`` maps factor names to the levels that switch the factor on; a
schedule level that is a one-key list (``[learner]``) may be written as that
key (``learner``). A design point where a condition does not hold gives the
factor no level (it is *inactive*: absent from the run's levels, an empty
``design.csv`` cell, nested within its parent in the analysis).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Sequence

from xdoe.documents._validation import short_repr
from xdoe.documents._yaml import YamlDocument

__all__ = ["unwrap_schedule_names", "resolve_when", "level_matches"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_ENTRY_KEYS = ("environments", "agents", "simulation", "phase_config")
_SET_KEYS = ("sensors", "actuators")


def _named_entry(value: Any) -> bool:
    return isinstance(value, dict) and "levels" in value and set(value) <= {"name", "levels"}


def unwrap_schedule_names(data: dict, source: YamlDocument) -> tuple[dict, dict[str, str]]:
    """Replace every ``{name, levels}`` schedule entry by its levels.

    Returns:
        ``(data, names)``: a copy of ``data`` (the input itself when no entry
        is named) and ``{positional name: given name}``, e.g.
        ``{"0.agents": "agent", "0.sensors.learner": "observation"}``.

    Raises:
        DocumentError: a name that is not ``[A-Za-z_][A-Za-z0-9_.-]*`` or is
            given twice.
    """
    schedule = data.get("schedule")
    if not isinstance(schedule, list):
        return data, {}
    names: dict[str, str] = {}
    out = None
    for index, entry in enumerate(schedule):
        if not (isinstance(entry, dict) and len(entry) == 1):
            continue
        (phase_name, phase), = entry.items()
        if not isinstance(phase, dict):
            continue
        for key, value in phase.items():
            targets = []
            if key in _ENTRY_KEYS and _named_entry(value):
                targets.append(((key,), f"{index}.{key}", value))
            elif key in _SET_KEYS and isinstance(value, dict):
                targets += [((key, agent), f"{index}.{key}.{agent}", v) for agent, v in value.items() if _named_entry(v)]
            for rel, positional, spec in targets:
                path = ("schedule", index, phase_name, *rel)
                given = spec.get("name", positional)
                if not isinstance(given, str) or not _NAME.match(given):
                    raise source.error(f"factor name {short_repr(given)} must match [A-Za-z_][A-Za-z0-9_.-]*", path + ("name",))
                if given in names.values():
                    raise source.error(f"factor name {given!r} is given twice in the schedule", path + ("name",))
                names[positional] = given
                if out is None:
                    out = copy.deepcopy(data)
                node = out["schedule"][index][phase_name]
                for part in rel[:-1]:
                    node = node[part]
                node[rel[-1]] = spec["levels"]
    return (data if out is None else out), names


def level_matches(level: Any, wanted: Any) -> bool:
    """Whether ``level`` is ``wanted``, or the one-key list ``[wanted]``."""
    return level == wanted or (isinstance(level, list) and len(level) == 1 and level[0] == wanted)


def _factor_hint(word: str, name: str, variables: dict[str, Any], written: Sequence[str] | None) -> str:
    """"did you mean" from the factors the document names (``written``: named
    factors and named schedule entries), never from positional names such as
    ``0.agents`` unless the word is one of that form."""
    from xdoe.documents._validation import closest

    shown = sorted(n for n in (written if written is not None else variables) if n != name and n in variables)
    pool = list(variables) if word[:1].isdigit() else shown
    close = closest(word, [n for n in pool if n != name])
    listing = ", ".join(shown) or "none named (name a schedule entry {name: ..., levels: [...]} to condition on it)"
    return (f"did you mean {close!r}? " if close else "") + f"factors: {listing}"


def resolve_when(
    name: str, when: dict[str, list], variables: dict[str, Any], source: YamlDocument, path: tuple,
    written: Sequence[str] | None = None,
) -> tuple[tuple[str, tuple], ...]:
    """Check a ``when`` mapping against the experiment's variables and return
    it as ``((factor, (level, ...)), ...)`` with the levels as the factor has them.

    Raises:
        DocumentError: an unknown or continuous factor, the factor itself, or
            a level the factor does not have.
    """
    out = []
    for parent, wanted in when.items():
        here = path + ("when", parent)
        if parent == name:
            raise source.error(f"factor {name!r} cannot depend on itself", here)
        var = variables.get(parent)
        if var is None:
            raise source.error(f"when: unknown factor {parent!r}; {_factor_hint(parent, name, variables, written)}",
                               here)
        if var.levels is None:
            raise source.error(f"when: factor {parent!r} is continuous; conditions need levels", here)
        wanted = wanted if isinstance(wanted, list) else [wanted]
        levels = []
        for w in wanted:
            match = [lv for lv in var.levels if level_matches(lv, w)]
            if not match:
                raise source.error(
                    f"when: {parent!r} has no level {short_repr(w)} (levels: {short_repr(list(var.levels))})", here
                )
            levels.extend(m for m in match if m not in levels)
        out.append((parent, tuple(levels)))
    return tuple(out)
