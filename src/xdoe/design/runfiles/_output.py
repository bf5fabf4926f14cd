"""Writing the outputs of xgen: run files, ``design.csv``, ``manifest.json``.

Layout (one place owns every output name, :class:`OutputLayout`)::

    <output>/run-<safe uid>-<NNNN>.yaml     NNNN = repetition * n_points + point
    <output>/design.csv                     run_uid, design_point, repetition, seed, one column per factor
    <output>/manifest.json                  xdoe version, input sha256, method, figures, files with sha256

Writing streams: one run document at a time is built, dumped, hashed and
written, and the CSV and the manifest are written row by row, so memory stays
flat however many runs there are. Writing is atomic: everything goes to a
temporary directory next to the target, renamed into place at the end. An
existing output folder is extended instead (:mod:`xdoe.design.runfiles._extend`):
identical means "up to date"; unchanged run files are kept as they are, new
ones added, vanished ones retired; the store, results and any other file in
the folder are never touched.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from xdoe._files import xgen_folder
from xdoe.design.runfiles._extend import ExtendPlan, layout_for, plan_extension, write_extension
from xdoe.design.runfiles._shared import ValueTexts
from xdoe.design.runfiles._staging import clean_stale_staging, staging_prefix
from xdoe.documents import canonical_json
from xdoe.errors import InputError, XdoeError

__all__ = [
    "MAX_FIGURE_POINTS", "OutputLayout", "WriteResult", "design_figures", "manifest_header", "plan_outputs",
    "write_outputs",
]

MANIFEST = "manifest.json"
DESIGN_CSV = "design.csv"
FIGURE_DIGITS = 12
#: whether files can be created relative to a directory descriptor
_DIR_FD = hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd
#: file names that json.dumps writes as they are, in quotes
_JSON_PLAIN = re.compile(r"[A-Za-z0-9_.-]*")
#: runs whose manifest entries and CSV lines are written at once
_BATCH = 128
#: designs larger than this get no space-filling figures (pairwise metrics, O(n^2) memory and time)
MAX_FIGURE_POINTS = 5_000


@dataclass(frozen=True)
class OutputLayout:
    """The names of every output file."""

    safe_uid: str
    #: the design table and the manifest (another name when a second
    #: experiment shares the folder: :func:`xdoe.design.runfiles._extend.layout_for`)
    design_csv: str = DESIGN_CSV
    manifest: str = MANIFEST

    def run_file(self, number: int) -> str:
        return f"run-{self.safe_uid}-{number:04d}.yaml"


@dataclass(frozen=True)
class WriteResult:
    """What :func:`write_outputs` did: ``status`` is ``"written"``,
    ``"extended"`` or ``"up to date"``; ``runs`` run files in ``path``;
    ``plan`` the files added, kept and retired when an existing output was
    extended (:class:`~xdoe.design.runfiles._extend.ExtendPlan`); ``cleaned`` the
    stale staging folders of an interrupted earlier xgen that were removed."""

    status: str
    path: Path
    runs: int
    plan: ExtendPlan | None = None
    cleaned: tuple[Path, ...] = field(default=())


class _Runs(Protocol):
    """The run documents to write (:class:`~xdoe.design.runfiles.RunSequence`)."""

    def __len__(self) -> int: ...
    def render(self, k: int) -> tuple[str, str, int, int, int, dict[str, Any]]:
        """Run ``k``'s file text, uid, design point, repetition, seed and levels."""


# ----------------------------------------------------------------- sinks


class _DirSink:
    """Writes files into a directory (opened once: each file is created
    relative to it, so the kernel does not walk the whole path per file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY) if _DIR_FD else None

    def close(self) -> None:
        if self.dir_fd is not None:
            os.close(self.dir_fd)

    def file(self, name: str, data: bytes) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        if self.dir_fd is not None:
            fd = os.open(name, flags, 0o644, dir_fd=self.dir_fd)
        else:  # a platform without dir_fd (Windows)
            fd = os.open(os.path.join(self.root, name), flags, 0o644)
        try:
            written = os.write(fd, data)
            if written < len(data):  # a short write: the rest
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def stream(self, name: str) -> "_Stream":
        return _Stream(open(self.root / name, "wb"))


class _Stream:
    """A file written in pieces, hashed on the way (``sha``)."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.sha = hashlib.sha256()

    def write(self, data: bytes) -> None:
        self.sha.update(data)
        self.fh.write(data)

    def close(self) -> str:
        self.fh.close()
        return self.sha.hexdigest()


# ----------------------------------------------------------------- content


def _figure(value: Any) -> Any:
    if value is None:
        return None
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return float(f"{value:.{FIGURE_DIGITS}g}")


def design_figures(design: Any) -> tuple[float | None, float | None]:
    """``(min distance, centred L2 discrepancy)`` of ``design``, rounded to
    12 significant digits (identical text on every platform); ``None`` when
    undefined (one point, no factors). The discrepancy costs O(n^2) time and
    is left out (``None``) above :data:`MAX_FIGURE_POINTS` points; the minimum
    distance (a k-d tree query, O(n log n)) is always computed."""
    discrepancy = None if len(design) > MAX_FIGURE_POINTS else _figure(design.discrepancy)
    return _figure(design.min_distance), discrepancy


def manifest_header(*, xdoe_version: str, input_sha256: str, design: Any, repetitions: int, max_runs: int | None) -> dict:
    """Everything of ``manifest.json`` but the file list."""
    min_distance, discrepancy = design_figures(design)
    header = {
        "design": {
            "factors": [f.name for f in design.factors],
            "max_runs": max_runs,
            "min_distance": min_distance,
            "discrepancy": discrepancy,
            "points": len(design),
            "reason": design.reason,
            "repetitions": repetitions,
            "runs": len(design) * repetitions,
        },
        "input_sha256": input_sha256,
        "method": design.method,
        "xdoe_version": xdoe_version,
    }
    if getattr(design, "info", None) is not None:  # a design: mapping (issue 24): what its dry run prints
        from xdoe.design import summary

        header["design"]["doe"] = summary(design)
    else:  # low and high of every factor as the analysis signs effects (issue 32), for every reader
        from xdoe.design import coding

        header["design"]["coding"] = coding(design, readable=True)
    return header


def _csv_cell(value: Any) -> str:
    """A level as ``design.csv`` shows it: as people read it
    (:func:`xdoe.results.readable`: a schedule level ``["learner"]`` reads
    ``learner``), numbers as ``repr``, other structures as canonical JSON."""
    if isinstance(value, str):
        return value
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)  # what canonical_json writes, without a json.dumps call per cell
    if kind is list and value and all(type(x) is str for x in value):
        from xdoe.documents import readable_level as readable

        return str(readable(value))
    return canonical_json(value)


_CSV_BUFFER = io.StringIO()
_CSV_WRITER = csv.writer(_CSV_BUFFER, lineterminator="\n")


def _csv_lines(rows: Iterable[list[str | int]]) -> bytes:
    """``rows`` as CSV lines (cells: texts from :func:`_csv_cell`, or ints,
    which ``csv`` writes as ``str``, what ``_csv_cell`` gives them)."""
    _CSV_BUFFER.seek(0)
    _CSV_BUFFER.truncate()
    _CSV_WRITER.writerows(rows)
    return _CSV_BUFFER.getvalue().encode("utf-8")


def _emit(
    runs: _Runs,
    layout: OutputLayout,
    header: dict,
    factor_names: list[str],
    sink: Any,
    progress: Callable[[int], None] | None,
) -> None:
    """Produce every output file into ``sink`` (streaming)."""
    manifest = sink.stream(layout.manifest)
    head = json.dumps(header, sort_keys=True, indent=1, ensure_ascii=False)  # overrides: a list, in its order
    # header keys sort as design < files < input_sha256 < method < overrides < xdoe_version
    before, after = head.split('\n "input_sha256"', 1)
    manifest.write((before + '\n "files": [').encode("utf-8"))
    table = sink.stream(layout.design_csv)
    table.write(_csv_lines([["run_uid", "design_point", "repetition", "seed", *factor_names]]))
    entries: list[str] = []  # manifest entries and CSV rows not yet written (written in batches)
    rows: list[list[str | int]] = []
    cell = ValueTexts(_csv_cell)  # a level's text, once per distinct level

    def entry(name: str, sha: str) -> None:
        quoted = f'"{name}"' if _JSON_PLAIN.fullmatch(name) else json.dumps(name)
        entries.append(f'{{"name": {quoted}, "sha256": "{sha}"}}')

    first = True

    def flush() -> None:
        nonlocal first
        if entries:
            manifest.write((("\n  " if first else ",\n  ") + ",\n  ".join(entries)).encode("utf-8"))
            first = False
            entries.clear()
        if rows:
            table.write(_csv_lines(rows))
            rows.clear()

    render, run_file = runs.render, layout.run_file
    sha256 = hashlib.sha256
    for k in range(len(runs)):
        text, uid, index, repetition, seed, levels = render(k)
        name, data = run_file(k), text.encode("utf-8")
        sink.file(name, data)
        entry(name, sha256(data).hexdigest())
        rows.append([uid, index, repetition, seed, *[cell(levels[f]) if f in levels else "" for f in factor_names]])
        if len(rows) >= _BATCH:
            flush()
        if progress is not None:
            progress(k + 1)
    flush()
    entry(layout.design_csv, table.close())
    flush()
    manifest.write(("\n ],\n \"input_sha256\"" + after + "\n").encode("utf-8"))
    manifest.close()


# ----------------------------------------------------------------- writing


def _emitter(
    runs: _Runs, layout: OutputLayout, header: dict | Callable[[], dict], factor_names: list[str]
) -> Callable[..., None]:
    resolved: list[dict] = []

    def emit(sink: Any, prog: Callable[[int], None] | None = None) -> None:
        if not resolved:  # a function: called once, when the first file is produced
            resolved.append(header() if callable(header) else header)
        _emit(runs, layout, resolved[0], factor_names, sink, prog)

    return emit


def _existing(target: Path, force_folder: bool = True) -> bool:
    """Whether ``target`` exists (then it is a folder xgen may write into).

    Raises:
        InputError: ``target`` is not a directory; or it is a non-empty folder
            that xgen did not create (:func:`xgen_folder`) and ``force_folder`` is false.
    """
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise InputError(f"{target}: exists and is not a directory")
        if not force_folder and not xgen_folder(target):
            raise InputError(
                f"{target}: exists, is not empty and was not created by xgen (it holds no manifest.json of "
                "xgen); choose a new or empty --output, or pass --force-folder to write into it anyway"
            )
        return True
    return False


def plan_outputs(
    runs: _Runs, *, output: str | Path, layout: OutputLayout, header: dict | Callable[[], dict],
    factor_names: list[str], force_folder: bool = False,
) -> ExtendPlan | None:
    """What :func:`write_outputs` would do to the existing ``output`` (files
    added, kept, retired, changed); ``None`` when it does not exist. Writes nothing.

    Raises:
        InputError: ``output`` exists and is not a directory, or is a
            non-empty folder xgen did not create (unless ``force_folder``).
    """
    target = Path(output)
    if not _existing(target, force_folder):
        return None
    layout = layout_for(target, layout)
    return plan_extension(target, layout, _emitter(runs, layout, header, factor_names), _Stream)


#: a user-fixable cause: the path names a file, a missing or read-only place, a name too long...
_INPUT_ERRNOS = {errno.EEXIST, errno.ENOTDIR, errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS,
                 errno.ENAMETOOLONG, errno.EISDIR, errno.ENOTEMPTY}


def output_os_error(target: Path, exc: OSError) -> XdoeError:
    """One line for an OS error while writing ``target``: an
    :class:`InputError` (exit 2) for a cause in the user's hands (the path
    is a file, missing, read-only, too long...), else an :class:`XdoeError`."""
    reason = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(target) else ""
    if exc.errno == errno.ENAMETOOLONG:
        reason += " (shorten the uid or the output path)"
    cls = InputError if exc.errno in _INPUT_ERRNOS else XdoeError
    return cls(f"cannot write the output {target}: {reason}{where}")


def write_outputs(
    runs: _Runs,
    *,
    output: str | Path,
    layout: OutputLayout,
    header: dict | Callable[[], dict],
    factor_names: list[str],
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    force_folder: bool = False,
) -> WriteResult:
    """Write all outputs into ``output``: a new folder atomically; into an
    existing folder by extending it (:mod:`xdoe.design.runfiles._extend`: unchanged
    run files untouched, new ones added, vanished ones moved to
    ``retired/<timestamp>/``; nothing else in the folder is touched).

    Args:
        runs: the run documents (a lazy sequence: ``len`` and ``[k]``).
        output: the target directory (created with its parents).
        layout: the file names.
        header: :func:`manifest_header`, or a function returning it (called
            once the output path was found usable: the design's figures
            cost time that a refused path should not).
        factor_names: the factor columns of ``design.csv``.
        force: replace run documents of this experiment whose content changed
            (their old versions are retired, not deleted).
        progress: called with the number of runs done so far.
        force_folder: write into an existing non-empty folder that holds no
            manifest of xgen (:func:`xgen_folder`); refused otherwise.

    Returns:
        :class:`WriteResult` (``"up to date"`` when the existing output is identical).

    Raises:
        InputError: ``output`` is not a directory, or a non-empty folder xgen
            did not create (without ``force_folder``); a file to write exists and
            was not written by xgen for this experiment; run documents would
            change and ``force`` is not set; the output cannot be created (a
            file on the path, a read-only or missing place, a name too long).
            Nothing is written then.
        XdoeError: another OS error while writing (disk full...); the
            staging folder is removed.
    """
    target = Path(output)
    try:
        return _write_outputs(runs, target, layout, header, factor_names, force, progress, force_folder)
    except OSError as exc:
        raise output_os_error(target, exc) from None


def _write_outputs(
    runs: _Runs,
    target: Path,
    layout: OutputLayout,
    header: dict | Callable[[], dict],
    factor_names: list[str],
    force: bool,
    progress: Callable[[int], None] | None,
    force_folder: bool = False,
) -> WriteResult:
    existing = _existing(target, force_folder)  # refused before anything is touched
    cleaned = clean_stale_staging(target)
    if existing:
        layout = layout_for(target, layout)
        emit = _emitter(runs, layout, header, factor_names)
        plan = write_extension(target, layout, lambda sink: emit(sink, progress), _Stream, force=force)
        fresh = not (plan.kept or plan.changed or plan.retired)  # nothing of this experiment was there
        status = "up to date" if plan.up_to_date else "written" if fresh else "extended"
        return WriteResult(status, target, len(runs), plan, cleaned)
    emit = _emitter(runs, layout, header, factor_names)
    parent = target.parent
    made = [p for p in (parent, *parent.parents) if not p.exists()]  # the folders this call creates, deepest first
    parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=staging_prefix(target), dir=parent))
        try:
            os.chmod(tmp, 0o755)
            sink = _DirSink(tmp)
            try:
                emit(sink, progress)
            finally:
                sink.close()
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    except BaseException:
        for folder in made:  # a run document that cannot be built (found while streaming) leaves nothing behind
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return WriteResult("written", target, len(runs), cleaned=cleaned)
