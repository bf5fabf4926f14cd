"""Reading and checking run documents before a command writes anything:
:func:`load_documents` (every file read and validated, one ``file:line: ...``
message per document that does not load) and :func:`checked_plans` (that,
then :func:`~xdoe.execution.preflight`: what ``xrun experiment-check`` finds
and what the store and results folders need; any problem is one ``error:``
line each and exit 2, nothing written). Used by ``xrun experiment-start`` and
``xrun submit`` (which checks before any job array is submitted)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import click

from xdoe.cli._common import EXIT_INPUT, document_warnings, resume_gc, without_pydantic_plugins
from xdoe.errors import InputError

if TYPE_CHECKING:
    from xdoe.execution import RunPlan

__all__ = ["Loaded", "changed_files", "load_documents", "checked_plans"]


@dataclass
class Loaded:
    """Documents that loaded (``plans``, each with its file's sha256,
    :attr:`~xdoe.execution.RunPlan.file_sha256`) and one message per
    document that did not."""

    plans: list["RunPlan"] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def load_documents(files: Sequence[str | Path],
                   written: Mapping[str, tuple[str, Any]] | None = None) -> Loaded:
    """Read and validate every file; collect ``file:line: ...`` messages.
    xdoe's document models are built without pydantic plugins
    (:func:`~xdoe.cli._common.without_pydantic_plugins`). ``written``: file
    -> ``(text, document)`` the writer put in it (``xrun optimize``'s
    batch): :func:`~xdoe.execution.load_file_plan` validates the document
    instead of parsing the file's YAML again while the file holds ``text``."""
    from xdoe.execution import load_file_plan

    loaded = Loaded()
    written = written or {}
    with without_pydantic_plugins(), document_warnings():
        for path in files:
            try:
                loaded.plans.append(load_file_plan(Path(path), written.get(str(path)))[0])
            except InputError as exc:
                loaded.errors.append(str(exc))
    return loaded


def checked_plans(files: Sequence[str | Path], *, store_url: str | None, results: str | Path | None,
                  written: Mapping[str, tuple[str, Any]] | None = None, workers: Any = None) -> list["RunPlan"]:
    """The documents of ``files``, read, validated and checked as
    ``xrun experiment-start`` checks them before the store or a results
    folder is created (:func:`load_documents`, then
    :func:`~xdoe.execution.preflight` with ``store_url``, ``results`` and
    ``workers``: the components constructed, the store and folders
    reachable). ``written``: as :func:`load_documents`.

    Exits with code 2 (``EXIT_INPUT``) after one ``error: ...`` line on
    stderr per problem, having written nothing, when a document does not
    load or a check fails."""
    loaded = load_documents(files, written)
    _exit_on(loaded.errors)
    # what experiment-check finds, and what the store and results folders need, before either is
    # created: a document that cannot run is one line, exit 2, nothing written (issue 33)
    from xdoe.execution import preflight

    resume_gc()  # the checks construct the user's components (see Program)
    _exit_on(preflight(loaded.plans, store_url=store_url, results=results, workers=workers))
    _exit_on(changed_files(files, written))
    return loaded.plans


def changed_files(files: Sequence[str | Path], written: Mapping[str, Any] | None = None) -> list[str]:
    """One ``file:1: changed since xgen wrote it ...`` line per run file an
    xgen manifest of its folder lists with another sha256
    (:func:`xdoe._files.changed_since_written`): its ``design_point`` would
    label its results with levels it may no longer run. Checked after the
    documents' own problems, which say more. ``written``: files the caller
    wrote itself (``xrun optimize``'s batch), not checked."""
    from xdoe._files import changed_since_written
    from xdoe.execution import located

    changed = changed_since_written(path for path in files if not (written and str(path) in written))
    return [located(path, why) for path, why in changed.items()]


def _exit_on(lines: Sequence[str]) -> None:
    if lines:
        for line in lines:
            click.secho(f"error: {line}", fg="red", err=True)
        sys.exit(EXIT_INPUT)
