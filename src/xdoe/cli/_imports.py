"""``xgen check --import`` / ``xgen generate --import``: import and
construct every component of an experiment's runs, as ``xrun
experiment-check`` does, and report errors against the experiment document.

Only this module, and only when asked, imports the executor (and through it
the user's modules and gymnasium): plain ``xgen`` never does.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from xdoe.errors import DocumentError, XdoeError

__all__ = ["check_imports"]

_RUN_KEY = re.compile(r"^((?:schedule|run_config|definitions)[\w\[\].-]*): (.*)$", re.S)
_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_QUOTED = re.compile(r"'([^']+)'")


def _path(text: str) -> list[str | int]:
    return [name if name else int(index) for name, index in _TOKEN.findall(text)]


def _component_at(doc: Any, path: list[str | int]) -> dict | None:
    """The deepest mapping with a ``name`` along ``path`` in the run document."""
    node, found = doc, None
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and isinstance(node.get("name"), str):
            found = node
    return found


def _components(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    """Every mapping with a string ``name`` in the experiment document, with its key path."""
    if isinstance(node, dict):
        if isinstance(node.get("name"), str):
            yield path, node
        for key, value in node.items():
            yield from _components(value, (*path, key))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            yield from _components(value, (*path, k))


def _locate(experiment: Any, doc: dict, message: str) -> DocumentError:
    """``message`` (about the run document ``doc``) as an error located in the
    experiment document: at the parameter it names, else at the component's
    ``name``, else at the document root."""
    match = _RUN_KEY.match(message)
    if match is None:
        return experiment.source.error(message)
    run_key, reason = match.groups()
    component = _component_at(doc, _path(run_key))
    where: tuple = ()
    if component is not None:
        # the component's name as the experiment document spells it (the run may use a resolved one)
        candidates = [(p, c) for p, c in _components(experiment.source.data) if c["name"] == component["name"]]
        params = set(_QUOTED.findall(reason))
        for path, candidate in candidates:
            named = params & set(candidate.get("params") or {})
            if named:
                where = (*path, "params", sorted(named)[0])
                break
        else:
            if candidates:
                where = (*candidates[0][0], "name")
    return experiment.source.error(f"{reason} (run key {run_key})", where)


def _distinct_points(runs: Any) -> Iterator[tuple[int, dict]]:
    """One run document per distinct set of components (seed, uid and design
    point removed): the components do not depend on the repetition."""
    from xdoe.documents import canonical_json

    seen: set[str] = set()
    for k in range(len(runs) if runs.repetitions == 1 else runs.n_points):
        doc = runs[k]
        key = canonical_json({k2: v for k2, v in doc.items() if k2 not in ("uid", "seed", "design_point")})
        if key not in seen:
            seen.add(key)
            yield k, doc


def check_imports(experiment: Any, runs: Any) -> tuple[int, list[str]]:
    """Import and construct every component of every distinct design point
    (``xrun experiment-check``'s check, with a throwaway seed).

    Every component that cannot be imported is reported (not only the
    first), and the first error constructing each run document's components
    (unknown params...).

    Returns:
        ``(documents checked, errors)``: each error one line
        ``file:line: key: message (run key ...)`` located in the experiment
        document, duplicates removed.
    """
    from xdoe.execution import check_document, import_errors, load_plan

    errors: dict[str, None] = {}
    checked = 0
    for _, doc in _distinct_points(runs):
        checked += 1
        found: list[str] = []
        try:
            found += import_errors(load_plan(doc))  # every component that does not import
            check_document(doc)  # and the first error constructing them (often one of those)
        except XdoeError as exc:
            found.append(str(exc))
        for message in found:
            errors[str(_locate(experiment, doc, message))] = None
    return checked, list(errors)
