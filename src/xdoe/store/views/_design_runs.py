"""The runs of an xgen output folder as ``xrun status`` counts them: every
run file (its uid and content hash, from the store when the store recorded
the file's bytes, else by loading it as the executor does) and every row of
its design table (see :func:`design_runs`; the statuses are decided in
:mod:`xdoe.store.views._status`).
"""

from __future__ import annotations

import csv
import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from xdoe._files import file_sha256
from xdoe.errors import InputError
from xdoe.store._json import document_hash
from xdoe.store.views._membership import session_child_uids

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["DesignRun", "design_runs"]


@dataclass(frozen=True)
class DesignRun:
    """A run expected by the design: uid, content hash (``None`` when the
    file could not be read), design coordinates, file and load error."""

    uid: str
    content_hash: str | None
    design_point: int | None = None
    repetition: int | None = None
    seed: int | None = None
    file: str | None = None
    error: str | None = None


def _int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _known_files(db: "Database", paths: list[str], experiment: str | None,
                 versions: Iterable[Any] | None = None) -> dict[str, Any]:
    """The run files whose bytes the store recorded (``run.file_sha256``, given
    only when the bytes alone determine the document): ``path -> (uid,
    content hash, design point, repetition, seed, experiment uid)``, so their
    YAML need not be parsed again. A file edited since (other bytes), never
    run, or run in another experiment than ``experiment`` (when given) is
    not in the answer. ``versions``: the run versions to look in when the
    caller read them already, else :func:`~xdoe.store.views._versions.version_rows`
    of ``experiment`` (one query)."""
    hashes: dict[str, list[str]] = {}
    for path in paths:
        try:
            hashes.setdefault(file_sha256(path), []).append(path)
        except OSError:
            continue  # unreadable: parsed below, which reports why
    if versions is None:
        from xdoe.errors import StoreError
        from xdoe.store.views._versions import version_rows

        try:
            versions = version_rows(db, experiment)
        except StoreError:  # a store that cannot answer this: parse every file
            return {}
    out: dict[str, Any] = {}
    for v in versions:
        if v.file_sha256 in hashes:
            for path in hashes[v.file_sha256]:
                out[path] = (v.uid, v.content_hash, v.design_point, v.repetition, v.seed, v.experiment)
    return out


def _matching(folder: Path, names: list[str], *patterns: str) -> list[str]:
    """The paths (text) of the entries ``names`` of ``folder`` (listed once,
    sorted) whose names match a pattern (as ``Path.glob``): 10,000 names sort
    as text in a millisecond, as :class:`~pathlib.Path` objects in a tenth
    of a second."""
    match = re.compile("|".join(fnmatch.translate(p) for p in patterns)).match
    prefix = os.path.join(folder, "")
    return [prefix + n for n in names if match(n)]


def _listed_files(folder: Path, names: tuple[str, ...]) -> list[str]:
    """The paths (text) of the files ``names`` (a manifest's) that are files
    in ``folder`` (as :func:`os.path.isfile`): one listing of the folder
    instead of a ``stat`` per name."""
    prefix = os.path.join(folder, "")
    with os.scandir(folder) as entries:
        present = {e.name for e in entries if e.is_file()}
    out = []
    for n in names:
        if n in present:
            out.append(prefix + n)
        elif (os.sep in n or "/" in n) and (folder / n).is_file():  # a name with a folder in it
            out.append(str(folder / n))
    return out


def design_runs(output_dir: str | Path, experiment: str | None = None, *,
                db: "Database | None" = None, tree_sessions: set[str] | None = None,
                versions: Iterable[Any] | None = None) -> list[DesignRun]:
    """The runs of an xgen output folder: every ``run-*.yaml`` (loaded and
    validated like ``xrun`` does, to hash it), with design point, repetition
    and seed from ``design.csv`` when present; a ``design.csv`` row without a
    file is a run with no hash and the error ``no run file``.

    A folder without ``run-*.yaml`` files uses its ``*.yaml``/``*.yml`` files
    (hand-written run documents). A document with a ``session`` record (a
    session of a tree, :class:`xdoe.documents.SessionInfo`) is not a run of
    the design and is left out, unless the folder holds nothing else (a
    tree's ``branches/`` folder).

    With ``experiment``, only that experiment's design: the run files and the
    design table its manifest lists (:func:`xdoe.design.runfiles.folder_experiments`);
    in a folder without its manifest, the run documents whose
    ``experiment_uid`` it is (and those that cannot be read).

    With ``store``, a run file whose bytes the store recorded (its sha256,
    ``run.file_sha256``) is not parsed again: its uid, content hash and
    design coordinates come from the store (a file edited since has other
    bytes and is parsed). A session recorded so (a child node of a session
    tree in the store) is a session here too, as its document says;
    ``tree_sessions``: those uids when the caller has read them already
    (:func:`~xdoe.store.views._membership.session_child_uids`); ``versions``: the
    store's run versions to match the files' hashes against when the caller
    has read them (:func:`~xdoe.store.views._versions.version_rows` of
    ``experiment``: no further query), else they are read.

    Raises:
        InputError: ``output_dir`` is not a folder or holds no run document.
    """
    folder = Path(output_dir)
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder (expected an xgen output folder)")
    from xdoe.design.runfiles import folder_experiments

    mine = folder_experiments(folder).get(experiment) if experiment is not None else None
    if mine is not None:
        tables = [str(mine.design_csv)] if mine.design_csv is not None and mine.design_csv.is_file() else []
        files = _listed_files(folder, mine.files)
    else:
        # design.csv, and design-<uid>.csv of further experiments sharing the folder
        names = sorted(os.listdir(folder))
        tables = _matching(folder, names, "design*.csv")
        files = _matching(folder, names, "run-*.yaml") or _matching(folder, names, "*.yaml", "*.yml")
    design: dict[str, dict[str, str]] = {}
    for csv_path in tables:
        with open(csv_path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                uid = row.get("run_uid")
                if uid:
                    design[uid] = row
    if not files and not design:
        raise InputError(f"{folder}: holds no design.csv and no run document (run-*.yaml)")
    found: list[DesignRun] = []
    sessions: list[DesignRun] = []
    seen: set[str] = set()
    known = _known_files(db, files, experiment, versions) if db is not None else {}
    children: set[str] = set()  # sessions of a tree among the known files: not design runs
    if known:
        children = tree_sessions if tree_sessions is not None else session_child_uids(db)
    if len(known) < len(files):  # pydantic's models are imported only when a file must be parsed
        from xdoe.documents import load_run_document
    for path in files:
        if path in known:
            uid, content_hash, index, repetition, seed, exp_uid = known[path]
            if experiment is not None and mine is None and exp_uid != experiment:
                continue  # another experiment's run document
            seen.add(uid)
            row = design.get(uid, {})
            (sessions if uid in children else found).append(DesignRun(
                uid=uid, content_hash=content_hash,
                design_point=index if index is not None else _int(row.get("design_point")),
                repetition=repetition if repetition is not None else _int(row.get("repetition")),
                seed=seed if isinstance(seed, int) else _int(row.get("seed")), file=path))
            continue
        try:
            model, data = load_run_document(Path(path))
        except InputError as exc:
            # xgen names files run-<uid>.yaml: match the design.csv row when there is one
            stem = Path(path).stem
            guess = stem[4:] if stem.startswith("run-") else stem
            uid = guess if guess in design else stem
            seen.add(uid)
            row = design.get(uid, {})
            found.append(DesignRun(uid=uid, content_hash=None, design_point=_int(row.get("design_point")),
                                   repetition=_int(row.get("repetition")), seed=_int(row.get("seed")),
                                   file=path, error=" ".join(str(exc).split())))
            continue
        if experiment is not None and mine is None and data.get("experiment_uid") != experiment:
            continue  # another experiment's run document
        uid = str(data["uid"])
        seen.add(uid)
        point = data.get("design_point") if isinstance(data.get("design_point"), dict) else {}
        row = design.get(uid, {})
        seed = data.get("seed")
        # a session of a tree (xrun branch/grow) is not a run of the design
        (sessions if isinstance(data.get("session"), dict) else found).append(DesignRun(
            uid=uid, content_hash=document_hash(data),
            design_point=point.get("index", _int(row.get("design_point"))),
            repetition=point.get("repetition", _int(row.get("repetition"))),
            seed=seed if isinstance(seed, int) else _int(row.get("seed")),
            file=path))
    for uid, row in design.items():
        if uid not in seen:
            found.append(DesignRun(uid=uid, content_hash=None, design_point=_int(row.get("design_point")),
                                   repetition=_int(row.get("repetition")), seed=_int(row.get("seed")),
                                   error="no run file"))
    return found or sessions  # a folder of sessions only (e.g. a branches/ folder): those
