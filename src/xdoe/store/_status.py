"""Campaign status: for every run of a design, whether it is finished,
running, failed, interrupted or missing.

The runs come from an xgen output folder (``design.csv`` and the run files;
a run version is its uid and the content hash of its loaded document,
computed exactly as the executor records it) and/or from the store (every
run of an experiment, its latest version). The status of a run version is
decided from its instances:

* ``running``: its newest instance is running and alive;
* ``interrupted``: its newest instance is marked interrupted, or is still
  marked running but is stale: its process is gone (same host) or its
  heartbeat is older than ``heartbeat_timeout`` seconds (the executor beats
  every 30 s) — and no instance finished;
* ``finished``: some instance finished (and the newest is not running);
* ``failed``: the newest instance failed (its one-line error is the reason);
* ``missing``: no instance of this version (the reason says when an older
  version of the document ran);
* ``invalid``: the run file cannot be read (only from an output folder).

Only the design's runs count: sessions of a session tree (``xrun branch``,
``xrun grow``; :mod:`xdoe.store._membership`) are left out, also a child
written with ``--no-run`` into the output folder before children had their
own ``branches/`` folder (it would be ``missing`` forever), and any run file
whose document has a ``session`` record. A folder holding only sessions (a
tree's ``branches/`` folder) shows those.
"""

from __future__ import annotations

import csv
import datetime as _dt
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from xdoe.errors import InputError
from xdoe.store._export import check_experiment
from xdoe.store._json import document_hash
from xdoe.store._models import Experiment, Run, RunInstance, utcnow
from xdoe.store._liveness import HEARTBEAT_TIMEOUT, dead_reason
from xdoe.store._membership import session_child_uids

if TYPE_CHECKING:
    from xdoe.store._rows import StoreRows as Store

__all__ = ["STATUSES", "RunStatus", "CampaignStatus", "campaign_status", "design_runs",
           "DesignRun", "summarize"]

#: Status of a run in a campaign, in display order.
STATUSES = ("finished", "running", "failed", "interrupted", "missing", "invalid")
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


@dataclass(frozen=True)
class RunStatus:
    """The status of one run (see the module docstring); ``instance_id`` and
    the times are those of the instance the status comes from."""

    run: str
    status: str
    reason: str | None
    design_point: int | None
    repetition: int | None
    seed: int | None
    content_hash: str | None
    instance_id: int | None = None
    instances: int = 0
    host: str | None = None
    start: _dt.datetime | None = None
    end: _dt.datetime | None = None
    file: str | None = None


@dataclass
class CampaignStatus:
    """Every run's :class:`RunStatus`, in design order, and the counts per status."""

    runs: list[RunStatus]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def all_finished(self) -> bool:
        """True when there is at least one run and every run finished."""
        return bool(self.runs) and all(r.status == "finished" for r in self.runs)

    @property
    def summary(self) -> str:
        """``"3 runs: 1 finished, 1 failed, 1 missing"`` (:func:`summarize` of the counts)."""
        return summarize(self.counts)


def _int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _known_files(store: "Store", paths: list[Path]) -> dict[Path, Any]:
    """The run files whose bytes the store recorded (``run.file_sha256``, given
    only when the bytes alone determine the document): ``path -> (uid,
    content hash, design point, repetition, seed, experiment uid)``, so their
    YAML need not be parsed again. A file edited since (other bytes) or never
    run is not in the answer."""
    import hashlib

    from xdoe.store._run_rows import IN_CHUNK

    hashes: dict[str, list[Path]] = {}
    for path in paths:
        try:
            hashes.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), []).append(path)
        except OSError:
            continue  # unreadable: parsed below, which reports why
    wanted = list(hashes)
    out: dict[Path, Any] = {}
    stmt = (select(Run.file_sha256, Run.uid, Run.content_hash, Run.design_point, Run.repetition, Run.seed,
                   Experiment.uid)
            .outerjoin(Experiment, Run.experiment_id == Experiment.id))
    from xdoe.errors import StoreError

    try:
        with store._read("read runs from") as session:
            for start in range(0, len(wanted), IN_CHUNK):
                for row in session.execute(stmt.where(Run.file_sha256.in_(wanted[start:start + IN_CHUNK]))):
                    for path in hashes[row[0]]:
                        out[path] = tuple(row[1:])
    except StoreError:  # a store that cannot answer this (an old schema read as it is): parse every file
        return {}
    return out


def design_runs(output_dir: str | Path, experiment: str | None = None, *,
                store: "Store | None" = None, tree_sessions: set[str] | None = None) -> list[DesignRun]:
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
    design table its manifest lists (:func:`xdoe.design.folder_experiments`);
    in a folder without its manifest, the run documents whose
    ``experiment_uid`` it is (and those that cannot be read).

    With ``store``, a run file whose bytes the store recorded (its sha256,
    ``run.file_sha256``) is not parsed again: its uid, content hash and
    design coordinates come from the store (a file edited since has other
    bytes and is parsed). A session recorded so (a child node of a session
    tree in the store) is a session here too, as its document says;
    ``tree_sessions``: those uids when the caller has read them already
    (:func:`~xdoe.store._membership.session_child_uids`).

    Raises:
        InputError: ``output_dir`` is not a folder or holds no run document.
    """
    folder = Path(output_dir)
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder (expected an xgen output folder)")
    from xdoe.design import folder_experiments

    mine = folder_experiments(folder).get(experiment) if experiment is not None else None
    if mine is not None:
        tables = [mine.design_csv] if mine.design_csv is not None and mine.design_csv.is_file() else []
        files = [folder / name for name in mine.files if (folder / name).is_file()]
    else:
        # design.csv, and design-<uid>.csv of further experiments sharing the folder
        tables = sorted(folder.glob("design*.csv"))
        files = sorted(folder.glob("run-*.yaml")) or sorted(
            [*folder.glob("*.yaml"), *folder.glob("*.yml")])
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
    known = _known_files(store, files) if store is not None else {}
    children: set[str] = set()  # sessions of a tree among the known files: not design runs
    if known:
        children = tree_sessions if tree_sessions is not None else session_child_uids(store)
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
                seed=seed if isinstance(seed, int) else _int(row.get("seed")), file=str(path)))
            continue
        try:
            model, data = load_run_document(path)
        except InputError as exc:
            # xgen names files run-<uid>.yaml: match the design.csv row when there is one
            guess = path.stem[4:] if path.stem.startswith("run-") else path.stem
            uid = guess if guess in design else path.stem
            seen.add(uid)
            row = design.get(uid, {})
            found.append(DesignRun(uid=uid, content_hash=None, design_point=_int(row.get("design_point")),
                                   repetition=_int(row.get("repetition")), seed=_int(row.get("seed")),
                                   file=str(path), error=" ".join(str(exc).split())))
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
            file=str(path)))
    for uid, row in design.items():
        if uid not in seen:
            found.append(DesignRun(uid=uid, content_hash=None, design_point=_int(row.get("design_point")),
                                   repetition=_int(row.get("repetition")), seed=_int(row.get("seed")),
                                   error="no run file"))
    return found or sessions  # a folder of sessions only (e.g. a branches/ folder): those


def _instances(store: "Store", experiment: str | None, uids: set[str] | None) -> dict[str, list[Any]]:
    stmt = (
        select(Run.uid, Run.content_hash, RunInstance.id, RunInstance.status, RunInstance.error,
               RunInstance.host, RunInstance.pid, RunInstance.start, RunInstance.end,
               RunInstance.heartbeat)
        .join(Run, RunInstance.run_id == Run.id)
        .outerjoin(Experiment, Run.experiment_id == Experiment.id)
    )
    if experiment is not None:
        stmt = stmt.where(Experiment.uid == experiment)
    out: dict[str, list[Any]] = {}
    with store._read("read run instances from") as session:
        for row in session.execute(stmt.order_by(RunInstance.id)):
            if uids is None or row.uid in uids:
                out.setdefault(row.uid, []).append(row)
    return out


def _store_runs(store: "Store", experiment: str | None) -> list[DesignRun]:
    """The latest version of every run in the store (of one experiment)."""
    stmt = (select(Run.id, Run.uid, Run.content_hash, Run.design_point, Run.repetition, Run.seed)
            .outerjoin(Experiment, Run.experiment_id == Experiment.id))
    if experiment is not None:
        stmt = stmt.where(Experiment.uid == experiment)
    latest: dict[str, Any] = {}
    with store._read("read runs from") as session:
        for row in session.execute(stmt.order_by(Run.id)):
            latest[row.uid] = row
    return [DesignRun(uid=r.uid, content_hash=r.content_hash, design_point=r.design_point,
                      repetition=r.repetition, seed=r.seed) for r in latest.values()]


def _decide(run: DesignRun, instances: list[Any], *, now: _dt.datetime, timeout: float,
            hostname: str) -> RunStatus:
    base = dict(run=run.uid, design_point=run.design_point, repetition=run.repetition,
                seed=run.seed, content_hash=run.content_hash, file=run.file)
    if run.content_hash is None:
        status = "missing" if run.error == "no run file" else "invalid"
        return RunStatus(status=status, reason=run.error, instances=len(instances), **base)
    mine = [i for i in instances if i.content_hash == run.content_hash]
    if not mine:
        reason = None
        if instances:
            reason = (f"the document changed: {len(instances)} instance(s) of another version, "
                      f"latest {instances[-1].status}")
        return RunStatus(status="missing", reason=reason, instances=0, **base)
    newest = mine[-1]
    finished = [i for i in mine if i.status == "finished"]

    def out(status: str, reason: str | None, inst: Any) -> RunStatus:
        return RunStatus(status=status, reason=reason, instance_id=int(inst.id),
                         instances=len(mine), host=inst.host, start=inst.start, end=inst.end, **base)

    if newest.status == "running":
        stale = dead_reason(newest.host, newest.pid, newest.heartbeat, newest.start, now=now,
                         timeout=timeout, hostname=hostname)
        if stale is None:
            return out("running", None, newest)
        if finished:
            return out("finished", None, finished[-1])
        return out("interrupted", f"marked running but {stale}", newest)
    if finished:
        return out("finished", None, finished[-1])
    if newest.status == "failed":
        return out("failed", newest.error or "failed (no error recorded)", newest)
    return out("interrupted", newest.error or newest.status, newest)


def campaign_status(
    store: "Store",
    output_dir: str | Path | None = None,
    experiment: str | None = None,
    *,
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    now: _dt.datetime | None = None,
    hostname: str | None = None,
    include_branches: bool = False,
) -> CampaignStatus:
    """The status of every run of a campaign.

    Args:
        output_dir: an xgen output folder: its runs are the campaign
            (:func:`design_runs`); ``None``: the runs in the store.
        experiment: only this experiment's design (of ``output_dir``) or
            runs (in the store), and its instances.
        heartbeat_timeout: seconds after which a running instance without a
            heartbeat counts as interrupted.
        now, hostname: for tests (default: the current time and host).
        include_branches: keep the sessions of session trees (``xrun status
            --run CHILD``); by default only the design's runs count.

    Returns:
        a :class:`CampaignStatus`, runs ordered by design point, repetition, uid.

    Raises:
        InputError: ``output_dir`` is unusable, or ``experiment`` is not in the
            store (when no ``output_dir`` is given).
        StoreError: the store cannot be read.
    """

    tree_sessions = session_child_uids(store)
    children: set[str] = set() if include_branches else tree_sessions
    if output_dir is not None:
        runs = design_runs(output_dir, experiment, store=store, tree_sessions=tree_sessions)
        if any(r.uid not in children for r in runs):  # else a folder of sessions (branches/): those
            runs = [r for r in runs if r.uid not in children]
        uids: set[str] | None = {r.uid for r in runs}
    else:
        check_experiment(store, experiment)
        runs = [r for r in _store_runs(store, experiment) if r.uid not in children]
        uids = None
    instances = _instances(store, experiment, uids)
    moment = now or utcnow()
    host = hostname if hostname is not None else socket.gethostname()
    statuses = [_decide(r, instances.get(r.uid, []), now=moment, timeout=heartbeat_timeout,
                        hostname=host) for r in runs]
    statuses.sort(key=lambda s: (s.design_point is None, s.design_point or 0, s.repetition is None,
                                 s.repetition or 0, s.run))
    counts = {s: 0 for s in STATUSES}
    for s in statuses:
        counts[s.status] += 1
    if not counts["invalid"]:
        del counts["invalid"]
    return CampaignStatus(statuses, counts)


def summarize(counts: dict[str, int]) -> str:
    """``"3 runs: 1 finished, 1 failed, 1 missing"`` (zero counts left out)."""
    total = sum(counts.values())
    parts = [f"{n} {name}" for name, n in counts.items() if n]
    return f"{total} run{'s' if total != 1 else ''}" + (": " + ", ".join(parts) if parts else "")
