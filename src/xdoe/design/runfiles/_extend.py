"""Extending an existing xgen output: add, keep, retire; never delete.

An output folder is shared by the campaign's other files (the store
``xrun.sqlite``, ``results/``, checkpoints, files of the user, other
experiments' run files). xgen owns only what one of its manifests lists; it
writes a new design into such a folder like this:

* a run file whose bytes are unchanged is not touched (same name, same mtime);
* a new one is added;
* a run file of this experiment whose design point no longer exists is moved
  to ``<output>/retired/<timestamp>/`` (never deleted), and so is the old
  version of a run file whose content changed, which is refused unless
  ``force`` (``force`` only ever replaces run documents);
* the manifest and the design table are replaced last (a copy of the old ones
  goes to the retired folder when anything was retired);
* a file xgen would write that exists but that no manifest of this
  experiment lists, with other content, is refused (it is not xgen's).

Names (:func:`layout_for`): one experiment per folder keeps ``manifest.json``
and ``design.csv``; another experiment (``uid``) writing into a folder whose
``manifest.json`` belongs to a different one gets ``manifest-<uid>.json`` and
``design-<uid>.csv``, so both coexist.

Everything new is first written into a staging folder next to the output and
moved into place file by file (``os.replace``, atomic per file), the manifest
last. An interruption (even SIGKILL) leaves the old manifest, and files
identical to what the next ``xgen generate`` writes, which it keeps. Until a
manifest lists them, run files added by an interrupted extension are
invisible to xrun: a folder with a manifest stands for the run files its
manifests list (:func:`xdoe._files.folder_run_files`), so the extension is
atomic as xrun sees it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from xdoe.design.runfiles._staging import staging_prefix
from xdoe.errors import InputError

__all__ = ["ExtendPlan", "RETIRED", "layout_for", "manifest_files", "plan_extension", "write_extension"]

#: folder of the output that receives retired run files, one subfolder per generation
RETIRED = "retired"
_SHOWN = 5  # names shown in one error line


def manifest_files(path: Path) -> set[str] | None:
    """The file names a ``manifest.json`` lists, ``None`` when it is missing
    or unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return {str(entry["name"]) for entry in data["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _owns(files: set[str] | None, safe_uid: str) -> bool:
    prefix = f"run-{safe_uid}-"
    return files is not None and any(name.startswith(prefix) for name in files)


def layout_for(target: Path, layout: Any) -> Any:
    """``layout`` with the manifest and design table names this experiment
    uses in ``target``: the plain names unless they belong to another
    experiment (then ``manifest-<uid>.json`` and ``design-<uid>.csv``)."""
    plain = target / layout.manifest
    own = target / f"manifest-{layout.safe_uid}.json"
    if own.is_file():
        return replace(layout, manifest=own.name, design_csv=f"design-{layout.safe_uid}.csv")
    if plain.is_file():
        if _owns(manifest_files(plain), layout.safe_uid):
            return layout
    elif not (target / layout.design_csv).exists():
        return layout
    return replace(layout, manifest=own.name, design_csv=f"design-{layout.safe_uid}.csv")


def recorded_overrides(target: Path, safe_uid: str) -> list[str]:
    """The command-line overrides (``KEY=VALUE`` texts, in order) that the
    experiment's manifest in ``target`` records (``xgen generate exp.yaml
    KEY=VALUE``): the study as generated is the document with these, and
    whatever extends it (``xgen augment``, ``xrun optimize``) applies them
    too. ``[]`` without a manifest of the experiment or without overrides.

    Raises:
        InputError: the manifest's ``overrides`` is not a list of texts.
    """
    from xdoe.documents import override_specs

    own = target / f"manifest-{safe_uid}.json"
    plain = target / "manifest.json"
    path = own if own.is_file() else plain if plain.is_file() and _owns(manifest_files(plain), safe_uid) else None
    if path is None:
        return []
    try:
        with open(path, encoding="utf-8") as fh:
            recorded = json.load(fh).get("overrides")
    except (OSError, ValueError, AttributeError):
        return []
    return override_specs(recorded) if recorded else []


@dataclass
class ExtendPlan:
    """What writing a design into an existing output does: counts of run
    files added and kept (counts only, so memory stays flat), the names of the
    changed, retired and foreign ones."""

    added: int = 0
    kept: int = 0
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    tables_same: bool = True
    retired_dir: Path | None = None

    @property
    def up_to_date(self) -> bool:
        return not (self.added or self.changed or self.retired or self.foreign) and self.tables_same

    def summary(self) -> str:
        """``added N, kept N, retired N`` (and ``replaced N`` when some changed)."""
        text = f"added {self.added}, kept {self.kept}, retired {len(self.retired)}"
        return text + (f", replaced {len(self.changed)}" if self.changed else "")


def _names(names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(names[:_SHOWN]) + more


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


class _PlanSink:
    """Compares every would-be file with ``target``; writes what is new or
    changed (and the manifest and table) into ``staging`` when given."""

    def __init__(self, target: Path, owned: set[str], staging: Path | None, stream: Callable[..., Any]) -> None:
        self.target, self.owned, self.staging = target, owned, staging
        self.plan = ExtendPlan()
        self.names: set[str] = set()
        self._stream = stream
        self._tables: list[tuple[str, Any]] = []

    def file(self, name: str, data: bytes) -> None:
        self.names.add(name)
        path = self.target / name
        try:
            with open(path, "rb") as fh:
                same = fh.read(len(data) + 1) == data
        except FileNotFoundError:
            self.plan.added += 1
            self._write(name, data)
            return
        except OSError:
            same = False
        if same:
            self.plan.kept += 1
            return
        (self.plan.changed if name in self.owned else self.plan.foreign).append(name)
        self._write(name, data)

    def _write(self, name: str, data: bytes) -> None:
        if self.staging is not None:
            with open(self.staging / name, "xb") as fh:
                fh.write(data)

    def stream(self, name: str) -> Any:
        self.names.add(name)
        # the manifest is ours when it listed files (``owned``); the table when the manifest lists it
        ours = bool(self.owned) if name.startswith("manifest") else name in self.owned
        if not ours and (self.target / name).exists():
            self.plan.foreign.append(name)
        fh = open(self.staging / name if self.staging is not None else os.devnull, "wb")
        out = self._stream(fh)
        self._tables.append((name, out))
        return out

    def finish(self) -> ExtendPlan:
        for name, out in self._tables:
            if _sha256(self.target / name) != out.sha.hexdigest():
                self.plan.tables_same = False
        run_files = {n for n in self.owned if n.startswith("run-")}
        self.plan.retired = sorted(n for n in run_files - self.names if (self.target / n).exists())
        return self.plan


def _owned(target: Path, layout: Any) -> set[str]:
    return manifest_files(target / layout.manifest) or set()


def plan_extension(target: Path, layout: Any, emit: Callable[[Any], None], stream: Callable[..., Any]) -> ExtendPlan:
    """What writing into the existing ``target`` would do; writes nothing."""
    sink = _PlanSink(target, _owned(target, layout), None, stream)
    emit(sink)
    return sink.finish()


def _check(target: Path, plan: ExtendPlan, force: bool) -> None:
    if plan.foreign:
        raise InputError(
            f"{target}: {_names(plan.foreign)} exist(s) but no manifest of this experiment lists them "
            "(not written by xgen for it); move them away or choose another --output"
        )
    if plan.changed and not force:
        raise InputError(
            f"{target}: {len(plan.changed)} run documents would change ({_names(plan.changed)}); "
            "use --force to replace them (their old versions go to "
            f"{RETIRED}/<timestamp>/; the store and results are never touched)"
        )


def _retired_dir(target: Path) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    root = target / RETIRED
    root.mkdir(exist_ok=True)
    for k in range(1000):
        path = root / (stamp if k == 0 else f"{stamp}-{k}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise InputError(f"{root}: cannot create a retired folder for {stamp}")


def write_extension(
    target: Path,
    layout: Any,
    emit: Callable[[Any], None],
    stream: Callable[..., Any],
    *,
    force: bool,
) -> ExtendPlan:
    """Write a design into the existing output ``target`` (see the module
    docstring); returns what was done.

    Raises:
        InputError: a file to write exists and is not this experiment's
            (nothing written), or run documents would change without ``force``.
    """
    owned = _owned(target, layout)
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(target), dir=target.parent))
    try:
        sink = _PlanSink(target, owned, staging, stream)
        emit(sink)
        plan = sink.finish()
        _check(target, plan, force)
        if plan.up_to_date:
            return plan
        gone = plan.retired + plan.changed
        if gone:
            plan.retired_dir = _retired_dir(target)
            for name in (layout.manifest, layout.design_csv):
                if (target / name).is_file():
                    shutil.copy2(target / name, plan.retired_dir / name)
            for name in gone:
                os.replace(target / name, plan.retired_dir / name)
        tables = {layout.manifest, layout.design_csv}
        for name in os.listdir(staging):  # the added and changed run files
            if name not in tables:
                os.replace(staging / name, target / name)
        os.replace(staging / layout.design_csv, target / layout.design_csv)
        os.replace(staging / layout.manifest, target / layout.manifest)  # last: the output is complete
        return plan
    finally:
        shutil.rmtree(staging, ignore_errors=True)
