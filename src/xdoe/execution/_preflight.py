"""Refusing, before anything is written, the run documents that cannot run
(issue 33, item 3): ``xrun experiment-start`` calls :func:`preflight` after
reading the documents and before it creates a store or a results folder.

It is ``xrun experiment-check``'s validation
(:func:`~xdoe.execution._runner.component_errors`: every component name
resolves to a class of the right base; :func:`~xdoe.execution.check_plan`:
every component constructs with its params, every sensor and actuator id
exists), plus what only a campaign knows: ``load``/``replay`` name an existing
checkpoint file or a run the store (or the campaign itself) holds, and the
results and store folders can be written.

Only what depends on the machine at run time stays a run failure: a module
that does not import here (it may on the node that runs it:
:class:`~xdoe.errors.ComponentImportError`) and plugin code that raises
(:class:`~xdoe.errors.ComponentRaisedError`, :class:`~xdoe.errors.RunError`).

Cost: components are imported and constructed once per distinct document
structure (:func:`structure_key`: the document with its numbers and
booleans replaced by their types, its uid, seed and design point left out),
so a design of 10,000 runs over numeric factors constructs them once.
With ``workers`` (``xrun --jobs N``: the campaign's own process pool,
its workers forked from the warm forkserver while ``xrun`` read the
documents) that happens in one of its worker processes, which then runs
the first run warm: the parent stays free of the workers' modules (numpy,
gymnasium, plugins), and plugin code that crashes natively while it is
imported or constructed cannot end ``xrun`` (its runs then fail on their
own; the pool replaces the dead worker).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from xdoe.errors import ComponentError, ComponentImportError, ComponentRaisedError, parse_key_path

if TYPE_CHECKING:
    from xdoe.execution._plan import RunPlan
    from xdoe.store import Store

__all__ = ["preflight", "structure_key", "folder_problem", "located"]

#: top-level keys that never change which classes a run builds or how
_IGNORED = frozenset({"uid", "seed", "design_point", "experiment_uid"})
#: file systems no results folder or store belongs on
_SPECIAL = ("/proc", "/sys", "/dev")


def structure_key(document: Any) -> str:
    """The shape of a run document: equal for documents that differ only in
    numbers, booleans, uid, seed or design point."""
    def shape(value: Any, top: bool = False) -> Any:
        if isinstance(value, dict):
            return {str(k): shape(v) for k, v in value.items() if not (top and k in _IGNORED)}
        if isinstance(value, (list, tuple)):
            return [shape(v) for v in value]
        if isinstance(value, bool) or isinstance(value, (int, float)):
            return f"<{type(value).__name__}>"
        return value if value is None or isinstance(value, str) else repr(type(value))

    return json.dumps(shape(document, top=True), sort_keys=True, default=str)


def _component_problems(plan: "RunPlan") -> list[str]:
    """``experiment-check``'s checks of one plan, without what depends on
    the machine: one ``key: what`` line per problem."""
    from xdoe.execution._runner import check_plan, component_errors
    from xdoe.execution._seeding import CHECK_SEED

    errors = component_errors(plan)
    if errors:  # nothing constructs without its class
        return list(dict.fromkeys(str(e) for e in errors if not isinstance(e, ComponentImportError)))
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink):
            warnings.simplefilter("ignore")
            check_plan(plan, CHECK_SEED)
    except ComponentRaisedError:
        return []  # plugin code raised: the run reports it
    except ComponentError as exc:
        return [str(exc)]
    except (Exception, SystemExit):  # noqa: BLE001 - plugin code (RunError...): the run reports it
        return []
    return []


def located(file: str | None, message: str) -> str:
    """``file:line: key: what`` for a ``key: what`` message about ``file``."""
    if not file:
        return message
    key = message.split(": ", 1)[0]
    line = None
    try:
        from xdoe.documents import load_yaml

        path = parse_key_path(key)
        if path:
            line = load_yaml(file).line(path)
    except Exception:  # noqa: BLE001 - no line then
        line = None
    return f"{file}:{line}: {message}" if line is not None else f"{file}: {message}"


def folder_problem(path: str | Path, what: str) -> str | None:
    """Why a folder (to be created) at ``path`` cannot be written, else
    ``None``: a symlink loop, a special file system (``/proc``, ``/sys``,
    ``/dev``), something on the way that is not a folder, or a first
    existing folder that cannot be written."""
    given = Path(path).expanduser()
    try:
        resolved = given.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        return f"{what} {given}: cannot be resolved ({exc.__class__.__name__}: {exc})"
    text = str(resolved)
    if any(text == s or text.startswith(s + "/") for s in _SPECIAL):
        return f"{what} {given}: is on a special file system ({resolved}), not a folder to write to"
    probe = resolved
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return f"{what} {given}: {probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{what} {given}: folder {probe} cannot be written"
    return None


def _sqlite_folder(store_url: str | None) -> Path | None:
    from xdoe.store import resolve_url, url_database

    try:
        backend, database = url_database(resolve_url(store_url))
    except ValueError:
        return None
    if backend != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser().parent


class _StoreReader:
    """The store, opened read-only on first use (``None`` when it does not
    exist yet or cannot be read: then every run it should hold is missing)."""

    def __init__(self, store_url: str | None) -> None:
        self.url = store_url
        self._store: "Store | None" = None
        self._opened = False

    def get(self) -> "Store | None":
        if not self._opened:
            self._opened = True
            from xdoe.store import Store, resolve_url, url_database

            url = resolve_url(self.url)
            try:
                backend, database = url_database(url)
                if backend == "sqlite" and not (database and Path(database).expanduser().is_file()):
                    return None  # not created yet (or in memory): it holds no run
                self._store = Store(url, read_only=True)
            except Exception:  # noqa: BLE001 - no store yet: it holds no run
                self._store = None
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def _checkpoint_file_problem(spec: Any, brain: Any) -> str | None:
    """Why ``load: {path: ...}`` names no checkpoint the agent's brain can
    load: missing, a folder or special file, unreadable, or a file its
    brain's ``load`` refuses (tried on a throwaway brain, as the run would)."""
    path = Path(spec.path).expanduser()
    where = f"{spec.key}.path"
    if not path.exists():
        return f"{where}: no checkpoint file {path} (relative paths start at {Path.cwd()})"
    if not path.is_file():
        return f"{where}: {path} is not a checkpoint file but a {'folder' if path.is_dir() else 'special file'}"
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        return f"{where}: cannot read checkpoint file {path}: {exc.strerror or exc}"
    from xdoe.agent import Brain
    from xdoe.execution._phase import build_component
    from xdoe.execution._seeding import CHECK_SEED

    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            instance = build_component(brain, Brain, seed=CHECK_SEED)
    except (Exception, SystemExit):  # noqa: BLE001 - reported with the components, or by the run
        return None
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            instance.load(path)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - plugin code says it is no checkpoint of it
        reason = " ".join(str(exc).split())[:300]
        return (f"{where}: {path} is not a checkpoint {type(instance).__name__} can load "
                f"({type(exc).__name__}: {reason})")
    return None


def _reference_problems(plan: "RunPlan", uids: set[str], store: _StoreReader) -> list[str]:
    from xdoe.execution._lineage import _describe_missing, _missing_run

    problems: list[str] = []
    seen: set[Any] = set()
    for phase in plan.phases:
        for agent in phase.agents:
            specs: list[Any] = [s for s in (agent.load_spec, *agent.replay_specs) if s is not None]
            for spec in specs:
                if spec in seen:
                    continue
                seen.add(spec)
                if getattr(spec, "path", None) is not None:
                    problem = _checkpoint_file_problem(spec, agent.brain)
                    if problem:
                        problems.append(problem)
                    continue
                if spec.run is None or spec.run in uids:
                    continue  # a run of this campaign: it runs first or fails itself
                db = store.get()
                if db is None:
                    problems.append(f"{spec.key}: no run {spec.run!r}: the store holds no runs yet")
                    continue
                try:
                    if db.runs.finished_instance(spec.run) is None:
                        problems.append(_missing_run(db, spec.run, spec.key))
                    elif hasattr(spec, "which") and db.checkpoints.latest_checkpoint(
                            spec.run, spec.agent, spec.phase, finished_only=True, best=spec.which == "best") is None:
                        problems.append(_describe_missing(db, spec, "checkpoint"))
                except Exception:  # noqa: BLE001 - a store that cannot be read is reported when it is opened
                    continue
    return problems


def _check_structures(plans: Sequence["RunPlan"]) -> list[list[str]]:
    """:func:`_component_problems` of each plan (one per structure)."""
    return [_component_problems(plan) for plan in plans]


def _check_in(workers: Any, plans: Sequence["RunPlan"]) -> list[list[str]]:
    """:func:`_check_structures` in a worker process of ``workers`` (an
    executor: ``submit(fn, *args)`` returns a future); a process that dies
    (a native crash in plugin code) leaves them to the runs."""
    try:
        return workers.submit(_check_structures, list(plans)).result()  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - BrokenProcessPool, an unpicklable plan...: the runs report it
        return [[] for _ in plans]


def preflight(plans: Sequence["RunPlan"], *, store_url: str | None, results: str | Path | None,
              campaign_uids: Iterable[str] = (), workers: Any = None) -> list[str]:
    """One ``error`` line (without the ``error: `` prefix) per problem that
    keeps a run document from running, checked without writing anything.

    Args:
        plans: the loaded documents.
        store_url: the store (``None``: ``$XRUN_STORE`` or the default).
        results: the root of the results folders (``None``: none).
        campaign_uids: further run uids of this campaign (a ``load`` of one
            of them is fine: it runs in this campaign).
        workers: an executor (``submit(fn, *args)`` returns a future, e.g.
            a :class:`~xdoe.campaign.backends.ProcessPoolBackend`) to
            construct the components in one of its worker processes
            (see the module docstring); ``None``: in this process.
    """
    lines: list[str] = []
    for problem in (folder_problem(results, "--results") if results is not None else None,
                    _folder_of_store(store_url)):
        if problem:
            lines.append(problem)
    lines += _prune_problems(plans)
    uids = {p.uid for p in plans} | set(campaign_uids)
    keys = [structure_key(plan.document) for plan in plans]
    first: dict[str, "RunPlan"] = {}
    for key, plan in zip(keys, plans):
        first.setdefault(key, plan)
    found = _check_structures(list(first.values())) if workers is None else _check_in(workers, list(first.values()))
    checked = dict(zip(first, found))
    store = _StoreReader(store_url)
    try:
        for key, plan in zip(keys, plans):
            problems = checked[key] + _reference_problems(plan, uids, store)
            lines += [located(plan.file, m) for m in dict.fromkeys(problems)]
    finally:
        store.close()
    return lines


def _prune_problems(plans: Sequence["RunPlan"]) -> list[str]:
    """``run_config.prune`` without Optuna installed (once), or naming a phase the run lacks."""
    from xdoe.errors import InputError
    from xdoe.execution._pruning import pruned_phase, require_optuna

    lines: list[str] = []
    pruned = [plan for plan in plans if plan.prune is not None]
    if pruned:
        try:
            require_optuna()
        except InputError as exc:
            lines.append(str(exc))
    for plan in pruned:
        try:
            pruned_phase(plan)
        except InputError as exc:
            lines.append(located(plan.file, str(exc)))
    return lines


def _folder_of_store(store_url: str | None) -> str | None:
    folder = _sqlite_folder(store_url)
    return None if folder is None else folder_problem(folder, "--store folder")
