"""The designs the dashboard knows: xgen's ``design.csv`` tables (and
``design-<uid>.csv`` of further experiments sharing a folder) under the
folder of run documents, so a campaign counts the runs its design expects,
started or not (a run never started is ``missing``).

A table belongs to the experiment named by its first run file's
``experiment_uid`` (``run-<run uid>.yaml`` next to it). Tables are read
again only when their size or modification time changes; the folders are
searched for tables at most every :data:`RESCAN` seconds (a results tree
of 10,000 runs under the root is not listed on every refresh).
"""

from __future__ import annotations

import csv
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DesignEntry", "Designs", "read_design_table"]

#: folder depths searched under the root (the root, children, grandchildren)
_PATTERNS = ("design*.csv", "*/design*.csv", "*/*/design*.csv")
#: most tables read (a working directory full of copies stays cheap)
MAX_TABLES = 50
_FIXED = ("run_uid", "design_point", "repetition", "seed")
#: seconds between two searches for design tables
RESCAN = 20.0


@dataclass(frozen=True)
class DesignEntry:
    """One run of a design: a row of ``design.csv`` (levels as written there,
    numbers and JSON read back as values)."""

    uid: str
    design_point: int | None
    repetition: int | None
    seed: int | None
    levels: dict[str, Any]


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text not in (None, "") else None
    except ValueError:
        return None


def _value(text: str) -> Any:
    """A ``design.csv`` cell as a value: a number or JSON structure as such,
    any other text as it is (a readable level such as ``learner``)."""
    if text[:1] in "-0123456789[{tfn" and text:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def read_design_table(path: Path) -> tuple[str | None, list[DesignEntry]]:
    """``(experiment uid, runs)`` of one design table; the experiment is
    ``None`` when no run file of the table can be read.

    Raises:
        OSError: the table cannot be read.
    """
    entries: list[DesignEntry] = []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            uid = row.get("run_uid")
            if not uid:
                continue
            levels = {k: _value(v) for k, v in row.items()
                      if k not in _FIXED and k is not None and v not in (None, "")}
            entries.append(DesignEntry(uid, _int(row.get("design_point")), _int(row.get("repetition")),
                                       _int(row.get("seed")), levels))
    return _experiment_of(path.parent, entries), entries


def _experiment_of(folder: Path, entries: list[DesignEntry]) -> str | None:
    from xdoe.documents import load_yaml  # the hardened loader (size, depth, alias limits)
    from xdoe.errors import XdoeError

    for entry in entries[:5]:
        file = folder / f"run-{entry.uid}.yaml"
        if not file.is_file():
            continue
        try:
            data = load_yaml(file).data
        except (OSError, XdoeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("experiment_uid"), str):
            return data["experiment_uid"]
    return None


class Designs:
    """The design tables under ``root``, cached per file (size, mtime)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._cache: dict[Path, tuple[tuple[int, int], str | None, list[DesignEntry]]] = {}
        self._lock = threading.Lock()
        self._found: tuple[float, list[Path]] | None = None

    def _tables(self) -> list[Path]:
        now = time.monotonic()
        if self._found is None or now - self._found[0] > RESCAN:
            self._found = (now, self.tables())
        return self._found[1]

    def tables(self) -> list[Path]:
        """Design tables under the root (no ``retired/`` copies, nothing
        reached through a link that leaves the root)."""
        found: list[Path] = []
        for pattern in _PATTERNS:
            for path in sorted(self.root.glob(pattern)):
                rel = path.relative_to(self.root)
                if "retired" in rel.parts[:-1] or not path.is_file():
                    continue
                real = path.resolve()
                if real != self.root and self.root not in real.parents:
                    continue
                found.append(path)
                if len(found) >= MAX_TABLES:
                    return found
        return found

    def by_experiment(self) -> dict[str, list[DesignEntry]]:
        """Experiment uid -> its designed runs (by uid, tables merged)."""
        out: dict[str, dict[str, DesignEntry]] = {}
        with self._lock:
            seen = set()
            for path in self._tables():
                seen.add(path)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                key = (st.st_size, st.st_mtime_ns)
                cached = self._cache.get(path)
                if cached is None or cached[0] != key:
                    try:
                        experiment, entries = read_design_table(path)
                    except (OSError, UnicodeDecodeError, csv.Error):
                        continue
                    cached = (key, experiment, entries)
                    self._cache[path] = cached
                _, experiment, entries = cached
                if experiment is not None:
                    runs = out.setdefault(experiment, {})
                    for e in entries:
                        runs.setdefault(e.uid, e)
            for path in set(self._cache) - seen:
                del self._cache[path]
        return {exp: list(runs.values()) for exp, runs in out.items()}
