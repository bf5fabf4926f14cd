"""The ``load:`` and ``replay:`` keys of an agent in a run document, parsed
(their meaning: :mod:`xdoe.execution._lineage`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdoe.errors import DocumentError, parse_key_path

__all__ = ["LoadSpec", "ReplaySpec", "parse_load", "parse_replay"]

_LOAD_KEYS = {"agent", "experiment_run", "phase", "path", "checkpoint"}
_REPLAY_KEYS = {"agent", "experiment_run", "phase"}


@dataclass(frozen=True)
class LoadSpec:
    """A parsed ``load:``: either ``run`` (+ ``agent``, ``phase``, ``which``) or ``path``."""

    agent: str
    run: str | None
    phase: str | int | None
    path: str | None
    which: str
    key: str


@dataclass(frozen=True)
class ReplaySpec:
    """One parsed ``replay:`` entry."""

    agent: str
    run: str
    phase: str | int | None
    key: str


def _phase_value(value: Any, key: str, file: str | None) -> str | int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise DocumentError(f"expected a phase name or index, got {value!r}", file=file,
                            key_path=(*parse_key_path(key), "phase"))
    return value


def _text(value: Any, name: str, key: str, file: str | None) -> str:
    if not isinstance(value, str) or not value:
        raise DocumentError(f"expected a non-empty string, got {value!r}", file=file,
                            key_path=(*parse_key_path(key), name))
    return value


def parse_load(value: Any, own_agent: str, key: str, file: str | None = None) -> LoadSpec | None:
    """Parse an agent's ``load`` (``None`` stays ``None``).

    Raises:
        DocumentError: not a mapping, unknown keys, neither or both of
            ``experiment_run`` and ``path``, or a value of the wrong type.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DocumentError("expected {agent, experiment_run, phase} or {path}, got "
                            f"{value!r}", file=file, key_path=parse_key_path(key))
    unknown = sorted(set(value) - _LOAD_KEYS)
    if unknown:
        raise DocumentError(f"unknown key(s) {', '.join(map(str, unknown))}; accepted: "
                            f"{', '.join(sorted(_LOAD_KEYS))}", file=file, key_path=parse_key_path(key))
    has_run, has_path = value.get("experiment_run") is not None, value.get("path") is not None
    if has_run == has_path:
        raise DocumentError("give either experiment_run (with agent and phase) or path",
                            file=file, key_path=parse_key_path(key))
    which = value.get("checkpoint", "latest") or "latest"
    if which not in ("latest", "best"):
        raise DocumentError(f"expected 'latest' or 'best', got {which!r}", file=file,
                            key_path=(*parse_key_path(key), "checkpoint"))
    if has_path:
        return LoadSpec(agent=own_agent, run=None, phase=None,
                        path=_text(value["path"], "path", key, file), which=which, key=key)
    agent = value.get("agent")
    return LoadSpec(
        agent=own_agent if agent is None else _text(agent, "agent", key, file),
        run=_text(value["experiment_run"], "experiment_run", key, file),
        phase=_phase_value(value.get("phase"), key, file), path=None, which=which, key=key,
    )


def parse_replay(value: Any, own_agent: str, key: str, file: str | None = None) -> tuple[ReplaySpec, ...]:
    """Parse an agent's ``replay`` (a mapping or a list of them; ``None``: none).

    Raises:
        DocumentError: malformed entries (as :func:`parse_load`).
    """
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    out = []
    for i, item in enumerate(items):
        where = f"{key}[{i}]" if isinstance(value, list) else key
        if not isinstance(item, dict):
            raise DocumentError(f"expected {{agent, experiment_run, phase}}, got {item!r}",
                                file=file, key_path=parse_key_path(where))
        unknown = sorted(set(item) - _REPLAY_KEYS)
        if unknown:
            raise DocumentError(f"unknown key(s) {', '.join(map(str, unknown))}; accepted: "
                                f"{', '.join(sorted(_REPLAY_KEYS))}", file=file,
                                key_path=parse_key_path(where))
        agent = item.get("agent")
        out.append(ReplaySpec(
            agent=own_agent if agent is None else _text(agent, "agent", where, file),
            run=_text(item.get("experiment_run"), "experiment_run", where, file),
            phase=_phase_value(item.get("phase"), where, file), key=where,
        ))
    return tuple(out)
