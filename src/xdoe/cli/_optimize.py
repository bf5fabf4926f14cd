"""``xrun optimize DOCUMENT``: run an adaptive design (``design: {method:
optuna, ...}``, :mod:`xdoe.design._optuna`) to the end.

The loop: run the trials the study has not been told (their run files, on
the chosen backend, through ``xrun experiment-start``'s own campaign code,
or with ``--slurm`` as SLURM job arrays, :mod:`xdoe.cli._slurm_batch`),
read each finished trial's response (the design's ``response``, per run as
``xrun analyze`` computes it, :func:`xdoe.analysis.run_table`, aggregated
over the trial's runs by its ``stat``; a trial with a run that
``run_config.prune`` ended early is told ``PRUNED`` with its runs' rung
values as intermediate values, one with a run that failed ``FAIL``), tell the study, ask the next batch
and write it as an ``xgen augment`` block; until ``trials``. Killed and
started again it continues the same study: finished runs are skipped,
finished trials told once, and what is asked next depends only on the
document's seed and the trials before it.

Built by :func:`optimize_command` with ``xrun experiment-start``'s runner and
options, so this module does not import :mod:`xdoe.cli._xrun`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from xdoe.cli._common import EXIT_FAILED, EXIT_OK, Number, fail, handle_errors
from xdoe.cli._slurm_batch import check_slurm_scale, run_batch, task_arguments
from xdoe.errors import InputError

__all__ = ["check_prune_batches", "optimize_command", "trial_values"]

F = Callable[..., Any]


def _prepare(document: Path, output: Path | None) -> tuple[Any, Path]:
    """``(runs, output)``: the document prepared with the overrides its
    manifest records (``xgen generate ... KEY=VALUE``); nothing written."""
    from xdoe.design.runfiles import prepare, recorded_overrides

    experiment, _, runs = prepare(document)
    target = output if output is not None else Path(experiment.model.output)
    recorded = recorded_overrides(target, experiment.safe_uid)
    if recorded:
        experiment, _, runs = prepare(document, overrides=recorded)
    return runs, target


def _pruned_runs(store: Any, uid: str) -> tuple[set[str], dict[str, dict[int, tuple[int, float]]]]:
    """``(pruned run uids, run uid -> rung -> (step, value))`` of the experiment."""
    return set(store.rungs.pruned_runs(uid)), store.rungs.run_rungs(uid)


def _intermediate(runs: list[str], rungs: dict[str, dict[int, tuple[int, float]]], stat: str) -> dict[int, float]:
    """Step -> the trial's runs' values at that rung aggregated by ``stat``."""
    import numpy as np

    from xdoe.analysis import aggregate

    by_step: dict[int, list[float]] = {}
    for u in runs:
        for step, value in rungs.get(u, {}).values():
            if np.isfinite(value):
                by_step.setdefault(step, []).append(value)
    return {step: float(aggregate(np.array(vs, float), stat)) for step, vs in sorted(by_step.items())}


def trial_values(study: Any, store_url: str, files: list[Path]) -> dict[int, Any]:
    """The values of the study's pending trials whose runs are all done
    (finished or pruned; ``files``: the batch's run files, done when the
    store holds their bytes as finished), reading those trials' runs only
    (not the experiment's every run: the cost of a batch does not grow with
    the trials before it), through one read-only connection to the store:
    per response, each run's score (:func:`xdoe.analysis.run_table`, as
    ``xrun analyze`` computes it) aggregated over the trial's runs by the
    design's ``stat`` (:func:`xdoe.analysis.aggregate`). A trial with a run
    that ``run_config.prune`` ended early is a :class:`~xdoe.design.PrunedTrial`
    (its aggregate would mix runs measured at different rungs), with its
    runs' rung values aggregated per rung as its intermediate values. A
    trial with a run that failed (an error the run raised, or its time
    limit: :func:`_failed`) is failed (``None``: told ``FAIL``, as Optuna
    tells an objective that raises), whatever its other runs did; a run
    interrupted or whose process died (Ctrl-C, killed) leaves its trial
    waiting, and runs again.

    Returns:
        trial number -> a list of values (one per response; NaN where no
        run of the trial has one), a :class:`~xdoe.design.PrunedTrial` or
        ``None`` (failed); empty when no store exists yet (no run has started).
    """
    from xdoe.campaign import skip_finished_files
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    try:
        store = Store(store_url, read_only=True)
    except NoStoreError:
        return {}
    with store:  # one connection for the batch's reads
        todo, _ = skip_finished_files([str(f) for f in files], store)
        left = {files[i] for i in todo}
        finished = {f.stem[len("run-"):] for f in files if f not in left}
        failed = _failed(store, [f.stem[len("run-"):] for f in files if f in left])
        runs = study.trial_runs()
        ready = [t for t in study.pending() if runs.get(t) and (
            all(u in finished for u in runs[t]) or any(u in failed for u in runs[t]))]
        return _ready_values(study, store, ready, runs, failed) if ready else {}


def _failed(store: Any, uids: list[str]) -> set[str]:
    """The runs of ``uids`` whose latest instance failed in the run: an error
    it raised or its time limit (``failed`` with a traceback). Not a run
    ``interrupted``, a ``running`` instance a killed process left, nor one
    whose process died (killed, out of memory: ``failed`` without a
    traceback, marked by the process that saw it die): those run again."""
    out = set()
    for uid in uids:
        latest = store.runs.latest_instance(uid)
        if latest is not None and latest.status == "failed" and latest.traceback:
            out.add(uid)
    return out


def _ready_values(study: Any, store: Any, ready: list[int], runs: dict[int, list[str]],
                  failed: set[str]) -> dict[int, Any]:
    """:func:`trial_values` of the ``ready`` trials, read from the open
    ``store`` (``None``, failed, for a trial with a run in ``failed``)."""
    import numpy as np

    from xdoe.analysis import aggregate, load_scores, parse_response, run_table
    from xdoe.design import PrunedTrial
    from xdoe.results import DESIGN_ATTR

    settings = study.settings
    pruned, rungs = _pruned_runs(store, study.base.experiment.safe_uid)
    out: dict[int, Any] = {t: None for t in ready if any(u in failed for u in runs[t])}
    for t in ready:
        if t in out:
            continue
        cut = [u for u in runs[t] if u in pruned]
        if cut:
            out[t] = PrunedTrial(_intermediate(runs[t], rungs, settings.stat), runs=len(cut))
    if len(out) == len(ready):
        return out
    scores = []
    wanted = [u for t in ready if t not in out for u in runs[t]]  # the complete trials' runs
    for text in settings.responses:
        response = parse_response(text or None)
        try:
            frame = load_scores(store, response, study.base.experiment.safe_uid, runs=wanted)
            # the store's record of the design (every trial's point) is not needed here, and pandas deep-copies
            # a frame's attrs at every operation: a cost that grew with the trials
            frame.attrs.pop(DESIGN_ATTR, None)
            table, _ = run_table(frame, response, settings.agent)
        except InputError:  # every run so far was pruned: no response to read
            table = None
        scores.append({} if table is None else dict(zip(table["run"].astype(str), table["y"].astype(float))))
    for t in ready:
        if t in out:
            continue
        values = []
        for by_run in scores:
            ys = [by_run[u] for u in runs[t] if u in by_run]
            values.append(aggregate(np.array(ys, float), settings.stat) if ys else float("nan"))
        out[t] = values
    return out


def _levels(study: Any, number: int) -> str:
    from xdoe.design import round_continuous

    values = study.design.values(number) if number < len(study.design) else {}
    return ", ".join(f"{k}={round_continuous(v) if isinstance(v, float) else v}" for k, v in values.items())


def check_prune_batches(runs: Any, batch: int, parallel: bool) -> str | None:
    """A warning (or ``None``) about the document's ``run_config.prune``
    under ``xrun optimize``: with ``batch_runs`` equal to the runs of a batch
    (``batch`` x repetitions; another number is refused when the document is
    prepared, :func:`~xdoe.design.runfiles.prepare`) each batch is judged
    against the batches before it only, so the decisions (hence the trials
    asked after them) are those of any ``--jobs``; without it, parallel runs
    of a batch judge each other as they happen to reach a rung (asynchronous)."""
    run_config = runs.experiment.model.definitions.run_config
    prune = run_config.prune if run_config is not None else None
    if prune is None or prune.batch_runs is not None or not parallel:
        return None
    size = batch * runs.repetitions
    return (f"warning: run_config.prune without batch_runs: the runs of a batch running at once judge each "
            f"other as they reach a rung, so the decisions and the trials asked after them depend on timing; "
            f"batch_runs: {size} judges each batch against the batches before it (the same under any --jobs)")


def _number(x: float) -> str:
    return f"{x:.6g}"


def optimize_command(*, start: Callable[..., None], options: list[Callable[[F], F]]) -> click.Command:
    """``xrun optimize`` running each batch with ``start`` (``xrun
    experiment-start``'s campaign: ``start(files, quiet, jobs, resume,
    written=..., **CampaignOptions fields)``, which exits; ``written``: file
    -> ``(text, document)`` the writer just put in it, which need not be
    parsed again, :meth:`~xdoe.design.OptunaStudy.documents`) and its option
    decorators."""
    from xdoe.cli._ctrl_c import RememberArgs, resume_line
    from xdoe.cli._submit import slurm_options

    def command(func: F) -> F:
        for decorate in reversed(options):
            func = decorate(func)
        return func

    @click.command("optimize", cls=RememberArgs,
                   short_help="Run an adaptive design (method: optuna): batch, tell, ask, until its trials.")
    @click.argument("document", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--output", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
                  help="The output folder xgen generate wrote [default: the document's 'output' key].")
    @click.option("--max-trials", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Stop once N or more trials are written and told (whole batches); the same command without it "
                       "goes on.")
    @click.option("--quiet", "-q", is_flag=True, help="Only errors and the final summary (the best trial): no progress display, summary "
                       "tables, trial lines or pruned-run lines.")
    @click.option("--run-timeout", type=Number(min=0.001, infinite=True), default=None, metavar="SECONDS",
                  help="Seconds each run may take (as xrun experiment-start).")
    @click.option("--laydown/--no-laydown", default=True, show_default=True,
                  help="Put the lay-down diagram laydown.svg into each run's results folder (as xrun experiment-start).")
    @click.option("--results", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
                  help="Root folder of the per-run results files [default: OUTPUT/results].")
    @command
    @click.option("--slurm", is_flag=True,
                  help="Run each batch as SLURM job arrays (as xrun submit --slurm, with the options below) and "
                       "wait for them; a store every node reaches (--store postgresql+psycopg://...).")
    @slurm_options()
    @handle_errors
    def optimize(document: Path, output: Path | None, max_trials: int | None, quiet: bool, jobs: str,
                 store_url: str | None, results: Path | None, slurm: bool, **campaign: Any) -> None:
        """Run an adaptive design (design: {method: optuna, ...}) written by
        xgen generate: run the trials not told yet (--jobs, --dask as xrun
        experiment-start), tell the Optuna study each trial's response
        aggregated over its runs, ask the next batch and write it as a block
        numbered after the existing runs (as xgen augment), until the
        design's trials. The study is the journal OUTPUT/optuna-<uid>.journal.

        Killed or stopped, the same command continues the same study:
        finished runs are skipped, each trial is told once, and the trials
        asked next are those an uninterrupted campaign asks.

        --slurm: each batch's runs are SLURM job arrays of xrun
        experiment-start tasks recording into the shared --store; the
        command prints their job ids and waits until they left the queue.
        Started again, it re-attaches to the arrays still queued instead of
        submitting their runs again.

        \b
        Example:
          xrun optimize study.yaml --slurm -p short -t 1:00:00 \\
            --store postgresql+psycopg://me@dbhost/xdoe

        A trial with a run that failed (an error, its time limit) is told
        FAIL, as Optuna tells an objective that raises, and the study goes on.

        Exit 0 when every trial ran and was told (FAIL included), 1 when a
        run was interrupted or its process died (its trial waits; the same
        command runs it again), 2 for unusable input, 130 after Ctrl-C.
        """
        from xdoe.analysis import parse_response
        from xdoe.cli._submit import SLURM_PARAMETERS, slurm_settings
        from xdoe.design import OptunaStudy

        resume = resume_line(click.get_current_context())
        slurm_values = {k: campaign.pop(k) for k in SLURM_PARAMETERS}
        if slurm:
            check_slurm_scale(jobs, campaign.get("dask"), campaign.get("in_process", False))
        runs, target = _prepare(document, output)
        store_url = store_url or f"sqlite:///{target / 'xrun.sqlite'}"  # --store, $XRUN_STORE, else beside it
        results = results if results is not None else target / "results"
        backend = None
        if slurm:  # refused before anything is written: a store the nodes cannot share, a bad option
            from xdoe.campaign.backends import SlurmBackend

            backend = SlurmBackend(slurm_settings(
                **slurm_values, store_url=store_url, results=results,
                run_args=task_arguments(store_steps=campaign["store_steps"], run_timeout=campaign["run_timeout"],
                                        laydown=campaign["laydown"], parallel_workers=campaign["parallel_workers"])))
        study = OptunaStudy(runs, target)
        for text in study.settings.responses:  # a bad response is refused before anything runs
            parse_response(text or None)
        say = (lambda text: None) if quiet else (lambda text: click.echo(text))
        settings = study.settings
        parallel = slurm or bool(campaign.get("dask")) or jobs.strip() != "1"
        warning = check_prune_batches(runs, settings.batch, parallel)
        if warning and not quiet:
            click.echo(warning, err=True)
        say(f"{study.base.experiment.safe_uid}: optuna {settings.sampler}, {settings.trials} trials in batches of "
            f"{settings.batch} x {runs.repetitions} run(s); study {study.path}")
        while True:
            pending = study.pending()
            if pending:
                files = study.files(pending)
                say(f"trials {pending[0]}..{pending[-1]}: {len(files)} run(s)")
                if backend is not None:
                    run_batch(backend, files, store_url, say, resume)
                else:
                    try:
                        start([str(f) for f in files], quiet, jobs, resume, store_url=store_url,
                              results=str(results),
                              written={str(path): (text, data) for path, text, data in study.documents(pending)},
                              **campaign)
                    except SystemExit as exc:
                        if exc.code not in (EXIT_OK, EXIT_FAILED, None):
                            raise
                told = study.tell(trial_values(study, store_url, files))
                frozen = study.study.get_trials(deepcopy=False) if told else []  # Study.trials copies them all
                for t in told:
                    trial = frozen[t]
                    value = ", ".join(map(_number, trial.values)) if trial.values else ""
                    if trial.state.name != "COMPLETE":
                        value = trial.state.name.lower() + (f" (last intermediate value {value})" if value else "")
                    say(f"  trial {t}: {_levels(study, t)} -> {value}")
                left = study.pending()
                if left:
                    fail(f"trial(s) {', '.join(map(str, left))} have runs that did not finish (failed or "
                         f"interrupted; see xrun status {target}); their trials wait: {resume}", EXIT_FAILED)
            if study.trials >= settings.trials or (max_trials is not None and study.trials >= max_trials):
                break
            added = study.extend()
            say(f"asked trials {study.trials - added}..{study.trials - 1}: wrote {added * runs.repetitions} run(s)")
        best = study.best()
        for trial in best:  # the final summary: said under -q too
            click.echo(f"best trial {trial.number}: {_levels(study, trial.number)} -> "
                f"{', '.join(map(_number, trial.values))} ({len(study.trial_runs().get(trial.number, []))} run(s))")
        if study.trials < settings.trials:
            click.echo(f"stopped at {study.trials} of {settings.trials} trials (--max-trials): the same command without "
                "it continues the study")
        sys.exit(EXIT_OK)

    return optimize

