"""One results table: every episode row of a campaign, joined with its run's
design (design point, repetition, seed, one column per factor), streamed to
CSV or Parquet with flat memory.

Which runs: the design's, never the sessions of a session tree (branches and
grown sessions, :mod:`xdoe.store.views._membership`); ``include_branches=True``
adds the sessions of the trees rooted in the selected runs, each marked with
its ``branch`` label.

Which instances are exported: for each run uid, the most recent *finished*
instance (else the most recent one, whatever its status); a phase that
instance did not record (a resumed instance that skipped phases already
done) is taken from the most recent earlier instance of the same run version
that finished it. ``all_instances=True`` exports every instance instead and
adds an ``instance`` column.

Rows come run by run (design point, repetition, run uid), phase by phase
(schedule order), episodes in the order they were recorded.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, null, select
from sqlalchemy.exc import SQLAlchemyError

from xdoe._files import refuse_existing, write_atomically
from xdoe.errors import InputError
from xdoe.store.schema._engine import store_error
from xdoe.store._rules import DONE_STATUSES
from xdoe.store.schema import _tables as t
from xdoe.store.schema._tables import END_COLUMNS

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["EXPORT_COLUMNS", "BRANCH_COLUMN", "ExportResult", "SelectedPhase", "export_episodes",
           "export_columns", "iter_export_rows", "selected_phases", "left_out_runs"]

#: The fixed columns of the table; factor columns go between ``seed`` and ``phase``.
DESIGN_COLUMNS = ("experiment", "run", "design_point", "repetition", "seed")
EPISODE_COLUMNS = ("phase", "mode", "worker", "episode", "agent", "steps", "reward",
                   "objective", "wall_time", "terminated", "truncated", "cut_by")
EXPORT_COLUMNS = DESIGN_COLUMNS + EPISODE_COLUMNS
#: The last column with ``include_branches``: a session's label (``None`` for the design's runs).
BRANCH_COLUMN = "branch"
#: Rows per Parquet record batch (and per fetch from the database).
BATCH_ROWS = 50_000
SUFFIXES = (".csv", ".parquet")


@dataclass(frozen=True)
class SelectedPhase:
    """One phase whose episodes are exported, with its run's design."""

    phase_id: int
    instance_id: int
    run_id: int
    experiment: str | None
    run: str
    design_point: int | None
    repetition: int | None
    seed: int | None
    levels: dict[str, Any]
    index: int
    name: str
    mode: str
    branch: str | None = None  # a session of a tree (include_branches): its label
    #: the status of the run's instance the phase was chosen for (``finished``, ``pruned``; or ``failed``,
    #: ``interrupted``, ``running``, ... when no instance of the run is done: its episodes stop where it stopped)
    status: str | None = None


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_episodes` wrote: ``rows`` data rows (header apart)
    with ``columns`` to ``path`` in ``seconds``."""

    path: Path
    rows: int
    columns: tuple[str, ...]
    seconds: float
    runs: int


def _phase_rows(db: "Database", experiment: str | None, uids: list[str] | None = None) -> list[Any]:
    stmt = (
        select(t.phase.c.id, t.phase.c.index, t.phase.c.name, t.phase.c.mode, t.phase.c.status, t.run_instance.c.id,
               t.run_instance.c.status, t.run.c.id, t.run.c.uid, t.run.c.content_hash, t.run.c.design_point,
               t.run.c.repetition, t.run.c.seed, t.run.c.levels, t.experiment.c.uid)
        .select_from(t.phase)
        .join(t.run_instance, t.phase.c.instance_id == t.run_instance.c.id)
        .join(t.run, t.run_instance.c.run_id == t.run.c.id)
        .outerjoin(t.experiment, t.run.c.experiment_id == t.experiment.c.id)
    )
    if experiment is not None:
        stmt = stmt.where(t.experiment.c.uid == experiment)
    if uids is not None:
        stmt = stmt.where(t.run.c.uid.in_(uids))
    with db.read("read phases from") as conn:
        return list(conn.execute(stmt.order_by(t.run_instance.c.id, t.phase.c.index)))


def check_experiment(db: "Database", experiment: str | None) -> None:
    """Raise :class:`InputError` when ``experiment`` is given and not in the store."""
    if experiment is None:
        return
    from xdoe.store.runs._runs import Runs

    known = Runs(db).experiments()
    if experiment not in known:
        listing = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "") if known else "none"
        raise InputError(f"no experiment {experiment!r} in store {db.url} (experiments: {listing})")


def phase_factors(phases: list[SelectedPhase]) -> list[str]:
    """The factor names of ``phases``' levels, each once, in the order they
    first appear (the factor columns of the results table, scores and curves)."""
    factors: list[str] = []
    for p in phases:
        factors.extend(f for f in p.levels if f not in factors)
    return factors


def selected_phases(db: "Database", experiment: str | None = None, *,
                    all_instances: bool = False, include_branches: bool = False,
                    runs: Sequence[str] | None = None) -> list[SelectedPhase]:
    """The phases whose episodes are exported (see the module docstring), in
    export order: the design's runs (of ``experiment``, or every design run;
    with ``runs``, only the runs of those uids), then, with
    ``include_branches``, the sessions of the trees rooted in them
    (``branch`` set, no design point, no levels). A few cheap queries over
    phases and session nodes (no episode is read).

    Raises:
        StoreError: the store cannot be read.
    """
    from xdoe.store.views._membership import branch_runs

    children = branch_runs(db)  # every session of a tree: never in the design
    if runs is None:
        rows = _phase_rows(db, experiment)
    else:  # bound the IN list (SQLite's variable limit); back into one (instance, phase) order
        uids = sorted(set(runs))
        chunks = [_phase_rows(db, experiment, uids[start:start + 500]) for start in range(0, len(uids), 500)]
        rows = sorted((r for chunk in chunks for r in chunk), key=lambda r: (int(r[5]), int(r[1])))
    rows = [r for r in rows if r[8] not in children]
    branches: dict[str, Any] = {}
    if include_branches and children:
        branches = children if experiment is None else branch_runs(db, experiment)
        uids = sorted(branches)
        for start in range(0, len(uids), 500):  # bound the IN list (SQLite's variable limit)
            rows += _phase_rows(db, None, uids[start:start + 500])

    def make(r: Any, status: str | None = None) -> SelectedPhase:
        (pid, index, name, mode, _ps, iid, instance_status, run_id, uid, _h, point, rep, seed, levels, exp) = r
        status = instance_status if status is None else status
        if uid in branches:  # a session of a tree: never a design point
            return SelectedPhase(int(pid), int(iid), int(run_id), exp, uid, None, None, seed, {},
                                 int(index), name, mode, branches[uid].label, status)
        return SelectedPhase(int(pid), int(iid), int(run_id), exp, uid, point, rep, seed,
                             levels if isinstance(levels, dict) else {}, int(index), name, mode, None, status)

    if all_instances:
        chosen = [make(r) for r in rows]
    else:
        # per run uid: the latest finished instance, else the latest
        latest: dict[str, tuple[int, str]] = {}  # uid -> (instance id, status)
        for r in rows:
            iid, status, uid = int(r[5]), r[6], r[8]
            best = latest.get(uid)
            if best is None or (status in DONE_STATUSES, iid) > (best[1] in DONE_STATUSES, best[0]):
                latest[uid] = (iid, status)
        by_instance: dict[int, dict[int, Any]] = {}
        of_run: dict[str, set[int]] = {}  # uid -> its instances (the search below stays within a run)
        for r in rows:
            by_instance.setdefault(int(r[5]), {})[int(r[1])] = r
            of_run.setdefault(r[8], set()).add(int(r[5]))
        chosen = []
        for uid, (iid, status) in latest.items():
            phases = dict(by_instance[iid])
            run_hash = next(iter(phases.values()))[9]
            # phases this instance did not record: from the latest earlier
            # instance of the same version that finished them (resume)
            for other in sorted(of_run[uid], reverse=True):
                if other >= iid:
                    continue
                for index, r in by_instance[other].items():
                    if index not in phases and r[8] == uid and r[9] == run_hash and r[4] == "finished":
                        phases[index] = r
            chosen.extend(make(phases[i], status) for i in sorted(phases))

    def order(p: SelectedPhase) -> tuple[Any, ...]:
        return (p.branch is not None, p.design_point is None, p.design_point or 0, p.repetition is None,
                p.repetition or 0, p.run, p.instance_id, p.index)

    return sorted(chosen, key=order)


def left_out_runs(phases: Sequence[SelectedPhase]) -> dict[str, str]:
    """Of the design's runs among ``phases`` (sessions of a tree apart), those
    whose chosen instance (the one whose episodes the table holds) did not
    finish: run uid -> its status, sorted by uid: ``pruned`` (its
    ``run_config.prune`` rule ended it at a rung), or, when no instance of the
    run is done, ``failed``, ``interrupted``, ``running``, ... Their episodes
    stop where the run stopped: a response of them would measure the stop, not
    the setting (the analysis leaves them out and says so). The one rule of
    which runs a response leaves out."""
    return {p.run: str(p.status) for p in sorted(phases, key=lambda p: p.run)
            if p.branch is None and p.status is not None and p.status != "finished"}


def _factor_kind(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "string"
    if all(isinstance(v, bool) for v in present):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def _factor_cell(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "string" and not isinstance(value, str):
        from xdoe.documents import readable_level  # as design.csv and every table show it

        return str(readable_level(value))
    return value


def export_columns(factors: list[str], *, all_instances: bool = False, branches: bool = False) -> list[str]:
    """Column names: the design columns, one per factor (a factor whose name
    clashes with a fixed column is called ``factor:<name>``), the episode
    columns, and with ``branches`` a last column ``branch``."""
    fixed = (*EXPORT_COLUMNS, "instance", BRANCH_COLUMN)
    names = [f"factor:{f}" if f in fixed else f for f in factors]
    design = list(DESIGN_COLUMNS)
    if all_instances:
        design.insert(2, "instance")
    return design + names + list(EPISODE_COLUMNS) + ([BRANCH_COLUMN] if branches else [])


def iter_export_rows(
    db: "Database",
    phases: list[SelectedPhase],
    factors: list[str],
    kinds: dict[str, str],
    *,
    all_instances: bool = False,
    branches: bool = False,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[tuple[Any, ...]]:
    """Stream the table's rows (tuples in :func:`export_columns` order; with
    ``branches`` each ends with its phase's ``branch`` label): one
    query per phase, fetched ``batch_rows`` at a time (a server-side cursor
    on PostgreSQL), so memory does not grow with the number of episodes.

    Raises:
        StoreError: the store cannot be read.
    """
    # a store made before schema version 2 and only read (not upgraded) has no
    # episode-end columns: they read as NULL, "not recorded"
    ends = ([t.episode.c.terminated, t.episode.c.truncated, t.episode.c.cut_by] if db.has_end_columns
            else [null().label(name) for name in END_COLUMNS])
    stmt = (
        select(t.episode.c.worker, t.episode.c.episode, t.episode.c.agent, t.episode.c.steps, t.episode.c.reward,
               t.episode.c.objective, t.episode.c.wall_time, *ends)
        .where(t.episode.c.phase_id == bindparam("phase_id"))
        .order_by(t.episode.c.id)
    )
    try:
        with db.engine.connect() as conn:
            streaming = conn.execution_options(stream_results=True, yield_per=batch_rows)
            for p in phases:
                levels = tuple(_factor_cell(p.levels.get(f), kinds[f]) for f in factors)
                head: tuple[Any, ...] = (p.experiment, p.run)
                if all_instances:
                    head += (p.instance_id,)
                prefix = head + (p.design_point, p.repetition, p.seed) + levels + (p.name, p.mode)
                result = streaming.execute(stmt, {"phase_id": p.phase_id})
                if branches:
                    suffix = (p.branch,)
                    for row in result:
                        yield prefix + tuple(row) + suffix
                    continue
                for row in result:
                    yield prefix + tuple(row)
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "read episodes from", exc) from None


def _csv_writer(fh: Any) -> Any:
    return csv.writer(fh, lineterminator="\n")


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # NaN / Infinity / -Infinity
    return value


def _write_csv(tmp: Path, columns: list[str], rows: Iterator[tuple[Any, ...]]) -> int:
    n = 0
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = _csv_writer(fh)
        writer.writerow(columns)
        batch: list[tuple[Any, ...]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= 10_000:
                writer.writerows(_clean_csv(batch))
                n += len(batch)
                batch = []
        if batch:
            writer.writerows(_clean_csv(batch))
            n += len(batch)
    return n


def _clean_csv(batch: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    # fast path: only bools and non-finite floats need care
    out = []
    for row in batch:
        for v in row:
            if isinstance(v, (bool, float)) and (isinstance(v, bool) or not math.isfinite(v)):
                row = tuple(_csv_value(x) for x in row)
                break
        out.append(row)
    return out


def _parquet_schema(columns: list[str], factors: list[str], kinds: dict[str, str],
                    all_instances: bool, branches: bool = False) -> Any:
    import pyarrow as pa

    kind_types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string()}
    types: list[Any] = [pa.string(), pa.string()]
    if all_instances:
        types.append(pa.int64())
    types += [pa.int64(), pa.int64(), pa.int64()]
    types += [kind_types[kinds[f]] for f in factors]
    types += [pa.string(), pa.string(), pa.int64(), pa.int64(), pa.string(), pa.int64(),
              pa.float64(), pa.float64(), pa.float64(), pa.bool_(), pa.bool_(), pa.string()]
    if branches:
        types.append(pa.string())
    return pa.schema(list(zip(columns, types)))


def _write_parquet(tmp: Path, schema: Any, rows: Iterator[tuple[Any, ...]], batch_rows: int) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 0
    types = [f.type for f in schema]
    with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
        batch: list[tuple[Any, ...]] = []

        def flush() -> None:
            arrays = [pa.array(col, type=t) for col, t in zip(zip(*batch), types)]
            writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=schema))

        for row in rows:
            batch.append(row)
            if len(batch) >= batch_rows:
                flush()
                n += len(batch)
                batch = []
        if batch:
            flush()
            n += len(batch)
        if n == 0:
            writer.write_table(schema.empty_table())
    return n


def export_episodes(
    db: "Database",
    path: str | Path,
    experiment: str | None = None,
    *,
    all_instances: bool = False,
    include_branches: bool = False,
    batch_rows: int = BATCH_ROWS,
    overwrite: bool = False,
    hint: str = "",
) -> ExportResult:
    """Write one long table, one row per episode, worker and agent, to
    ``path`` (``.csv``, or ``.parquet`` with pyarrow).

    Columns: ``experiment``, ``run``, (``instance`` with ``all_instances``),
    ``design_point``, ``repetition``, ``seed``, one column per factor (the
    run's level; the union of factor names over the exported runs, sorted),
    ``phase``, ``mode``, ``worker``, ``episode``, ``agent``, ``steps``,
    ``reward``, ``objective``, ``wall_time`` (seconds), ``terminated``,
    ``truncated`` (booleans) and ``cut_by`` (what cut a truncated episode, see
    :mod:`xdoe._cuts`; all three empty/null when not recorded: rows of a store
    made before schema version 2), and with ``include_branches`` ``branch``
    (the sessions of the trees rooted in these runs come after the design's
    runs, labelled ``parent + key=value``; empty for the design's runs). CSV cells: empty for
    null, levels that are not numbers or strings as canonical JSON (as in
    ``design.csv``). Parquet types: strings, int64, float64 (factor columns
    int64/float64/bool when every level is one, else string), zstd-compressed,
    written in record batches of ``batch_rows`` rows.

    The file is written to a temporary file beside ``path`` and moved into
    place (:func:`xdoe._files.write_atomically`), so a failed export leaves no
    partial file; an existing ``path`` is replaced only with ``overwrite``
    (``hint``: what to do instead, appended to the refusal).

    Raises:
        InputError: unknown suffix, pyarrow missing for ``.parquet``,
            ``experiment`` is not in the store, or ``path`` exists (without
            ``overwrite``).
        StoreError: the store cannot be read.
        OSError: the file cannot be written.
    """
    started = time.perf_counter()
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"{target}: unknown table format {target.suffix or '(no suffix)'!r}; "
                         f"use {' or '.join(SUFFIXES)}")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            from xdoe._extras import install_command

            raise InputError(f"{target}: writing Parquet needs pyarrow; install it with "
                             f"`{install_command('parquet')}` or export to .csv") from None
    if not overwrite:
        refuse_existing(target, hint)  # before any query: nothing is read for a refused file
    check_experiment(db, experiment)
    phases = selected_phases(db, experiment, all_instances=all_instances, include_branches=include_branches)
    runs: dict[int, dict[str, Any]] = {p.run_id: p.levels for p in phases}
    factors = sorted({f for levels in runs.values() for f in levels})
    kinds = {f: _factor_kind([levels.get(f) for levels in runs.values()]) for f in factors}
    columns = export_columns(factors, all_instances=all_instances, branches=include_branches)
    rows = iter_export_rows(db, phases, factors, kinds, all_instances=all_instances,
                            branches=include_branches, batch_rows=batch_rows)
    written = 0

    def write(tmp: Path) -> None:
        nonlocal written
        if suffix == ".csv":
            written = _write_csv(tmp, columns, rows)
        else:
            written = _write_parquet(tmp, _parquet_schema(columns, factors, kinds, all_instances, include_branches),
                                     rows, batch_rows)

    write_atomically(target, write, overwrite=overwrite, hint=hint)
    return ExportResult(target, written, tuple(columns), time.perf_counter() - started,
                        len({p.run for p in phases}))
