"""Running one run document: :func:`run` (Python API) and the picklable
per-run functions the command line (and, later, process pools) call."""

from __future__ import annotations

import hashlib
import time
import traceback as _traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from xdoe.errors import DiskFullError, RunPruned, RunStopped, StoreError, StoreLostError, no_space_cause, one_line
from xdoe.execution._interrupts import plugin_exit, watch_sigint
from xdoe.execution._plan import RunPlan, document_data, plan_run
from xdoe.execution._tracking import log_live
from xdoe.execution._watchdog import RunTimeout
from xdoe.store import DEFAULT_RESULTS_ROOT, HEARTBEAT_TIMEOUT

if TYPE_CHECKING:
    from xdoe.documents import LogTarget, RunDocument
    from xdoe.execution._resume import Decision
    from xdoe.execution._runner import PhaseResult, ProgressCallback
    from xdoe.store import Store

__all__ = [
    "RunResult",
    "run",
    "load_plan",
    "load_file_plan",
    "check_document",
    "DEFAULT_RESULTS",
]

#: Where results folders go unless told otherwise (the store's one constant).
DEFAULT_RESULTS = DEFAULT_RESULTS_ROOT


@dataclass
class RunResult:
    """The outcome of one execution of a run document (picklable).

    Attributes:
        uid: the run uid.
        status: ``"finished"``, ``"pruned"`` (ended early by its
            ``run_config.prune`` rule: ``error`` says at which rung),
            ``"failed"``, ``"interrupted"`` or ``"skipped"``
            (finished earlier, or running in another live process: see ``note``).
        episodes: episodes run, all phases and workers together.
        steps: environment updates, all phases and workers together.
        phases: per phase, a :class:`~xdoe.execution.PhaseResult` with the mean
            episode reward and objective per agent.
        wall_time: seconds.
        instance_id: the run instance's id in the store (``None`` if it was
            not recorded).
        results_dir: the instance's results folder (``None`` likewise).
        error: one line naming the cause when the run failed.
        traceback: the formatted traceback when the run failed.
        file: the document file, when it came from one.
        note: what happened besides running, e.g. ``"skipped: finished earlier
            (instance 3)"`` or ``"resumed interrupted instance 3"``.
        resumed: the run continued an interrupted instance (``instance_id``).
        stop_campaign: the run hit what every later run would hit too (no
            space left on a device, :class:`~xdoe.errors.DiskFullError`):
            start no more runs.
        task_key: the :attr:`~xdoe.campaign.RunTask.key` of the task this
            result answers (``None`` outside a campaign): results are matched
            to tasks by it, never by file name.
        warnings: what the run reported and went on with, one line each
            (e.g. an observation outside its space, the first of each sensor:
            :mod:`xdoe._plugins._observations`).
    """

    uid: str
    status: str
    episodes: int = 0
    steps: int = 0
    phases: list["PhaseResult"] = field(default_factory=list)
    wall_time: float = 0.0
    instance_id: int | None = None
    results_dir: str | None = None
    error: str | None = None
    traceback: str | None = None
    file: str | None = None
    note: str | None = None
    resumed: bool = False
    stop_campaign: bool = False
    task_key: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the run is done: finished or pruned (now or earlier: ``skipped``)."""
        return self.status in ("finished", "pruned", "skipped")

    def mean_rewards(self, mode: str | None = "test") -> dict[str, float]:
        """Agent name -> mean episode reward over the phases of ``mode``
        (``None``: all phases), weighting phases by their episodes."""
        return self._means("rewards", mode)

    def mean_objectives(self, mode: str | None = "test") -> dict[str, float]:
        """Like :meth:`mean_rewards` for the objective."""
        return self._means("objectives", mode)

    def _means(self, attr: str, mode: str | None) -> dict[str, float]:
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for phase in self.phases:
            if mode is not None and phase.mode != mode:
                continue
            for agent, value in getattr(phase, attr).items():
                sums[agent] = sums.get(agent, 0.0) + value * phase.episodes
                counts[agent] = counts.get(agent, 0) + phase.episodes
        return {a: sums[a] / counts[a] for a in sums if counts[a]}


def load_plan(source: "str | Path | Mapping[str, Any] | RunDocument | RunPlan") -> RunPlan:
    """A :class:`RunPlan` from a file path, plain run-document data, a
    :class:`~xdoe.documents.RunDocument` or a plan.

    Raises:
        DocumentError: the document cannot be read or is invalid (file, line
            and key path in the message).
    """
    if isinstance(source, RunPlan):
        return source
    from xdoe.documents import RunDocument, load_run_document, parse_run_document

    if isinstance(source, (str, Path)):
        model, data = load_run_document(source)
        return plan_run(model, data, file=str(source))
    if isinstance(source, RunDocument):
        return plan_run(source, document_data(source))
    if isinstance(source, Mapping):
        model, data = parse_run_document(dict(source))
        return plan_run(model, data)
    raise TypeError(f"expected a path, a mapping or a RunDocument, got {type(source).__name__}")


def load_file_plan(path: str | Path,
                   written: tuple[str, Mapping[str, Any]] | None = None) -> tuple[RunPlan, str | None]:
    """Like :func:`load_plan` for a file, and the sha256 of the bytes it
    parsed (also the plan's :attr:`~RunPlan.file_sha256`), under which the
    store records the run (``Store.recorder``'s ``file_sha256``) so that
    ``xrun`` can skip the same bytes later without parsing them.

    The hash is ``None`` when the document's uid is the file name's stem
    (a document without ``uid`` takes it from the file name, so its bytes
    alone do not determine it).

    ``written``: ``(text, document)``, what the run-file writer put in the
    file (``xrun optimize``'s batch, :meth:`~xdoe.design.OptunaStudy.documents`):
    when the file's bytes are exactly ``text``, ``document`` is validated
    instead of parsing the YAML again; the file stays the record (its bytes
    are read and hashed as always), and a file changed since is parsed.

    Raises:
        DocumentError: as :func:`load_plan`.
    """
    from xdoe.documents import load_yaml, parse_run_document, read_bytes

    raw = read_bytes(path)  # the size limit, regular files only
    if written is not None and raw == written[0].encode("utf-8"):
        model, data = parse_run_document(dict(written[1]), file=str(path))
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return load_plan(Path(path)), None  # raises the usual "cannot read" error
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # as read_text's universal newlines
        model, data = parse_run_document(load_yaml(path, text=text))
    plan = plan_run(model, data, file=str(path))
    if plan.uid == Path(path).stem:
        return plan, None
    plan = replace(plan, file_sha256=hashlib.sha256(raw).hexdigest())
    return plan, plan.file_sha256


def run(
    document: "str | Path | Mapping[str, Any] | RunDocument | RunPlan",
    *,
    store: "Store | str | None" = None,
    results: str | Path | None = DEFAULT_RESULTS,
    store_steps: str = "none",
    progress: "ProgressCallback | None" = None,
    rerun: bool = False,
    heartbeat_timeout: float | None = None,
    run_timeout: float | None = None,
    decision: "Decision | None" = None,
    log: "Sequence[str | LogTarget]" = (),
) -> RunResult:
    """Execute one run document phase by phase and record it in the store.

    A run whose exact document (uid and content hash) has a finished
    instance in the store is skipped (``status="skipped"``, ``note`` says
    which instance) unless ``rerun``; an interrupted instance of it, or one
    whose process died, is resumed (see :mod:`xdoe.execution._resume`).
    Many runs (claims, backends, one store query for all of them):
    :class:`xdoe.campaign.Campaign`. The lay-down diagram is not drawn here
    (``xrun experiment-start`` draws it; ``xrun plot laydown``).

    Args:
        document: a run-document file, its data, a ``RunDocument`` or a
            ``RunPlan`` (a plan from :func:`load_file_plan` records its
            file's sha256 with the run).
        store: a :class:`xdoe.store.Store`, a store URL, or ``None`` for
            ``$XRUN_STORE`` / ``sqlite:///_outputs/xrun.sqlite``.
        results: the root of the results folders (default ``_outputs/results``).
        store_steps: ``none``, ``all`` or ``every:N``: which steps the store keeps.
        progress: called at every phase start and episode end with a
            :class:`~xdoe.execution.ProgressEvent`.
        rerun: start a new instance even if the run finished before (or
            another instance is running or resumable).
        heartbeat_timeout: seconds after which a ``running`` instance without
            heartbeat counts as dead and is resumed (default 120).
        run_timeout: seconds the run may take (``xrun --run-timeout``); the
            smaller of it and the document's ``run_config.timeout`` applies.
            A run passing it, or a phase's ``phase_config.step_timeout``,
            fails with ``no progress for N s in <Class>.<method>``
            (:mod:`xdoe.execution._watchdog`).
        decision: what to do (:func:`xdoe.execution._resume.decision_for`),
            decided by a caller that read the run's state already (a
            campaign); default: read it here (one query). A resume another
            process wins first is decided again.
        log: ``tensorboard:DIR`` / ``mlflow:URI`` targets the episodes are
            logged to as they are recorded, besides the document's
            ``run_config.log`` (:mod:`xdoe.tracking`); a failure to log is
            a warning of the run, never its failure.

    Returns:
        a :class:`RunResult`. A run that fails (a component cannot be loaded
        or raises, an unknown sensor id, an action outside its space, a
        ``load`` source that does not exist) is marked ``failed`` in the
        store with its traceback and returned with ``status="failed"`` and
        ``error``; it does not raise.

    Raises:
        DocumentError: the document cannot be read or is invalid (nothing is
            recorded).
        StoreError: the store cannot be opened or written.
        InputError: ``store_steps`` is invalid.
    """
    from xdoe.execution._resume import decide, prepare_resume
    from xdoe.execution._runner import execute_plan
    from xdoe.store import Store

    plan = load_file_plan(document)[0] if isinstance(document, (str, Path)) else load_plan(document)
    own_store = not isinstance(store, Store)
    db = Store(store) if own_store else store  # type: ignore[arg-type]
    timeout = HEARTBEAT_TIMEOUT if heartbeat_timeout is None else float(heartbeat_timeout)
    try:
        recorder = db.recorder(plan.document, results_root=results, store_steps=store_steps,
                               file_sha256=plan.file_sha256, content_hash=plan.content_hash,
                               design=_design_of(plan))
        started = time.perf_counter()
        resume_point = None
        note = None
        try:
            while True:
                if decision is None:
                    decision = decide(db, plan.uid, plan.content_hash, rerun=rerun, heartbeat_timeout=timeout)
                if decision.action == "skip":
                    return RunResult(uid=plan.uid, status="skipped", instance_id=decision.instance_id,
                                     file=plan.file, note=decision.note)
                if decision.action == "new":
                    recorder.start()
                    break
                if recorder.resume(decision.instance):  # also drops a stop request left behind
                    note = decision.note
                    resume_point = prepare_resume(db, recorder, plan)
                    break
                decision = None  # another process took it over first: decide again
        except (DiskFullError, OSError) as exc:  # the disk is full before the run could start
            full = _disk_full(exc, recorder)
            if full is None or full.store:
                raise
            result = RunResult(uid=plan.uid, status="interrupted", instance_id=recorder.instance_id,
                               file=plan.file, error=str(full), stop_campaign=True)
            if recorder.instance_id is not None:  # recorded, its files not: resumable
                recorder.discard_files()
                recorder.finish("interrupted", error=str(full))
            return result
        result = RunResult(uid=plan.uid, status="running", instance_id=recorder.instance_id,
                           results_dir=None if recorder.results_dir is None else str(recorder.results_dir),
                           file=plan.file, note=note, resumed=resume_point is not None)
        from xdoe._plugins import observation_report  # here: a campaign's parent never runs a run

        report = observation_report(label=f"run {plan.uid}")  # the run's out-of-space observations (issue 25)
        try:
            with watch_sigint() as sigint, report as found:
                result.warnings = found.messages  # filled while the run goes on
                recorder.on_warning = found.note  # one report of every warning (a non-finite reward too)
                log_live(plan, log, recorder, resumed=resume_point is not None, heartbeat_timeout=timeout)
                with _limits(plan, run_timeout, result, recorder):  # the time limits count the run alone
                    execute_plan(plan, recorder, progress=progress, phases_done=result.phases,
                                 resume=resume_point)
        except BaseException as exc:  # noqa: BLE001 - sorted out below; only a real Ctrl-C propagates
            _ended(result, recorder, exc, genuine_interrupt=sigint.genuine(exc))
            if isinstance(exc, RunStopped):
                db.runs.clear_stop_request(recorder.instance_id)
            if sigint.genuine(exc):
                raise
        else:
            result.status = "finished"
            recorder.finish("finished", warnings=result.warnings)
        result.wall_time = time.perf_counter() - started
        result.episodes = sum(p.episodes for p in result.phases)
        result.steps = sum(p.steps for p in result.phases)
        return result
    finally:
        if own_store:
            db.close()


def _limits(plan: RunPlan, run_timeout: float | None, result: RunResult, recorder: Any) -> Any:
    """The run's :class:`~xdoe.execution._watchdog.Watchdog`, or a no-op
    context when neither time limit is set."""
    import contextlib

    timeout = min((x for x in (plan.timeout, run_timeout) if x), default=None)
    if timeout is None and not any(p.step_timeout for p in plan.phases):
        return contextlib.nullcontext()
    from xdoe.execution._watchdog import Watchdog

    def step_timeout() -> float | None:  # the phase running now: phases_done grows as phases end
        return plan.phases[min(len(result.phases), len(plan.phases) - 1)].step_timeout

    def stuck(message: str) -> None:  # from the watchdog's thread: the run cannot end itself
        import os
        import socket

        recorder.store.runs.fail_running_instances(plan.uid, recorder.content_hash, host=socket.gethostname(),
                                              pids={os.getpid()}, error=message)

    return Watchdog(timeout, step_timeout, on_stuck=stuck)


def _ended(result: RunResult, recorder: Any, exc: BaseException, *, genuine_interrupt: bool) -> None:
    """Record how a run that raised ended: ``interrupted`` for a real Ctrl-C,
    a stop request and a full disk (resumable; a full disk stops the
    campaign), else ``failed`` —
    also for ``sys.exit()`` or a ``KeyboardInterrupt`` raised by plugin code.

    Raises:
        StoreError: the store cannot record it (e.g. its own disk is full).
    """
    tb = _traceback.format_exc()
    full = _disk_full(exc, recorder)
    if genuine_interrupt:
        result.status, result.error = "interrupted", "interrupted"
    elif isinstance(exc, RunStopped):  # a stop request: this run ends, resumable; the others go on
        result.status, result.error = "interrupted", str(exc)
    elif isinstance(exc, RunPruned):  # its prune rule ended it at a rung: done, with every episode it ran
        result.status, result.error = "pruned", str(exc)
        _finish(recorder, "pruned", result.error, None, result.warnings)
        return
    elif isinstance(exc, StoreLostError):  # the store is gone (waited for): nothing can be recorded
        result.status, result.error, result.stop_campaign = "interrupted", str(exc), True
        recorder.discard_files()  # the store keeps what was flushed; a resume runs the rest again
        raise exc from None  # its instance stays "running" with a process that is gone: resumed next time
    elif full is not None:
        result.status, result.error, result.stop_campaign = "interrupted", str(full), True
        recorder.discard_files()
        if full.store:  # the store's own disk: try to record the end, then say why it stops
            try:
                _finish(recorder, result.status, result.error, tb, result.warnings)
            except StoreError:
                pass
            raise full from None
    elif isinstance(exc, Exception):
        result.status, result.error = "failed", one_line(exc)
    elif isinstance(exc, RunTimeout):  # a time limit (xdoe.execution._watchdog)
        result.status, result.error = "failed", str(exc)
    else:
        result.status, result.error = "failed", plugin_exit(exc)
    if result.status == "failed":
        result.traceback = tb
    _finish(recorder, result.status, result.error or "", tb, result.warnings)


def _disk_full(exc: BaseException, recorder: Any) -> DiskFullError | None:
    """The :class:`DiskFullError` behind ``exc`` (no space left on a device),
    naming the folder that could not be written; ``None`` for other errors."""
    full = no_space_cause(exc)
    if full is None or isinstance(full, DiskFullError):
        return full
    name = getattr(full, "filename", None)
    where = Path(name).parent if name else recorder.results_dir or recorder.results_root or "the results folder"
    return DiskFullError(str(where), getattr(full, "strerror", None) or str(full))


def _finish(recorder: Any, status: str, error: str, tb: str | None, warnings: list[str]) -> None:
    """Close an open phase and the instance (with the run's ``warnings``),
    never masking the run's error with a second one from the store."""
    try:
        if getattr(recorder, "phase_id", None) is not None:
            recorder.phase_finished(status)
    except Exception:  # pragma: no cover - the store is failing too
        pass
    recorder.finish(status, error=error, traceback=tb, warnings=warnings)


def check_document(source: "str | Path | Mapping[str, Any] | RunDocument | RunPlan",
                   seed: int | None = None) -> list[str]:
    """Validate a run document and import and construct every component
    (with a throwaway seed), starting each environment once to resolve
    sensor and actuator ids; nothing runs.

    Returns:
        one line per phase describing what was checked.

    Raises:
        DocumentError: the document is invalid.
        ComponentError: a component cannot be imported or constructed, or an
            agent names an id its environments do not offer.
        RunError: a component raised while being set up.
    """
    from xdoe.execution._runner import check_plan
    from xdoe.execution._seeding import CHECK_SEED

    return check_plan(load_plan(source), CHECK_SEED if seed is None else seed)


def _design_of(plan: "RunPlan") -> dict[str, Any] | None:
    """The design of ``plan``'s experiment as the manifest beside its file
    records it (:func:`xdoe._files.manifest_design`), ``None`` without one."""
    experiment = plan.document.get("experiment_uid")
    if plan.file is None or not isinstance(experiment, str):
        return None
    from xdoe._files import manifest_design

    return manifest_design(Path(plan.file).parent, experiment)

