"""Adaptive designs through Optuna: ``design: {method: optuna, sampler:
tpe|cmaes|gp|random|nsga2, trials: N, batch: k, repetitions_per_trial: r}``.

The factors are Optuna's search space (:func:`distributions`): a range is a
``FloatDistribution`` (``IntDistribution`` for ``integer: true``; ``log``
for ``scale: log``), levels a ``CategoricalDistribution`` over the levels
(over their indices when a level is not a plain scalar). A conditional
factor (``when``) is Optuna's conditional parameter: each trial is asked
define-by-run (:func:`_suggest`), parents first, and a factor is suggested
only when its parents took the levels its ``when`` names, so the trial's
``params`` hold exactly the design point's active factors (its run
documents' ``design_point.levels``). Two trials may ask the same setting
(a branch without continuous factors): both are kept, as design points of
their own (``make_design`` drops no duplicate of an optuna design), the
second a copy with a seed of its own.

**Trial number = design point.** Trial ``t`` of the study is design point
``t`` of the xdoe design, run ``r`` times (its runs are listed in the
manifest, ``design.doe.info.trial_runs``). ``xgen generate`` writes the first
``k`` trials as the design (block 0); ``xrun optimize`` runs them, tells the
study each trial's response and writes the next ``k`` as a block of
``xgen augment`` (``{"optuna": ...}``), until ``trials``.

**The study** lives in an Optuna ``JournalStorage`` file beside the
manifest, ``optuna-<uid>.journal`` (:func:`journal_name`): xgen never touches
the store, and the file is Optuna's own (``optuna-dashboard`` reads it).
It can always be rebuilt from the manifest (:func:`sync_study` enqueues the
manifest's points that it lacks) and the store (the responses).

**Seeds.** Trial ``t`` is asked from a sampler made afresh with the seed
``SeedSequence(seed, spawn_key=(37, t))`` (:func:`xdoe._random.seed_word`),
so what a trial is depends only on the document's seed, its number and the
study's trials before it -- not on the process that asks it: a campaign
killed and restarted asks the same trials as one that was not.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from xdoe._phases import phase_named
from xdoe._random import seed_word
from xdoe.design._factors import Factor
from xdoe.errors import DesignError, InputError

__all__ = ["OptunaSettings", "PrunedTrial", "SAMPLERS", "SEED_KEY", "check_targets", "distributions", "first_batch", "journal_name",
           "open_study",
           "scratch_copy", "sync_study", "next_batch", "tell_trials", "trial_runs", "record_study", "study_params"]

SAMPLERS = ("tpe", "cmaes", "gp", "random", "nsga2")
#: first word of the spawn key of every sampler seed (issue 37)
SEED_KEY = 37
_PLAIN = (str, int, float, bool, type(None))


def import_optuna() -> Any:
    """``optuna``, quiet (no INFO line per trial), or ``ModuleNotFoundError``
    (named by :mod:`xdoe._extras`: ``pip install 'xdoe[optuna]'``)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


@dataclass(frozen=True)
class OptunaSettings:
    """The resolved options of an optuna design (defaults filled in)."""

    sampler: str = "tpe"
    trials: int = 1
    batch: int = 1
    responses: tuple[str, ...] = ("",)
    directions: tuple[str, ...] = ("maximize",)
    stat: str = "iqm"
    agent: str | None = None
    startup_trials: int | None = None

    @classmethod
    def of(cls, options: dict[str, Any]) -> "OptunaSettings":
        """From a ``design:`` mapping's options or a manifest's ``design.doe.info``."""
        def listed(value: Any, default: str) -> tuple[str, ...]:
            if value is None:
                return (default,)
            return tuple(value) if isinstance(value, (list, tuple)) else (value,)

        responses = listed(options.get("response"), "")
        directions = listed(options.get("direction"), "maximize")
        if len(directions) == 1 and len(responses) > 1:
            directions = directions * len(responses)
        if len(responses) == 1 and len(directions) > 1:
            responses = responses * len(directions)
        return cls(sampler=options.get("sampler", "tpe"), trials=int(options.get("trials", 1)),
                   batch=int(options.get("batch", 1)), responses=responses, directions=directions,
                   stat=options.get("stat", "iqm"), agent=options.get("agent"),
                   startup_trials=options.get("startup_trials"))

    def info(self) -> dict[str, Any]:
        """What the manifest records (``design.doe.info``), defaults included."""
        return {"sampler": self.sampler, "trials": self.trials, "batch": self.batch,
                "response": list(self.responses), "direction": list(self.directions), "stat": self.stat,
                **({"agent": self.agent} if self.agent else {}),
                **({"startup_trials": self.startup_trials} if self.startup_trials is not None else {})}


def check_targets(options: dict[str, Any], phases: Sequence[str], agents: Sequence[str]) -> None:
    """Refuse an optuna design whose ``response`` or ``agent`` names nothing
    its runs record (each of its trials would be told ``FAIL``, silently).

    Args:
        options: the ``design:`` mapping's options.
        phases: the schedule's phase names, in order (a response's ``PHASE``
            is one of them or an index below their number, as ``xrun
            analyze --response`` reads it).
        agents: the names of the document's agents.

    Raises:
        DesignError: naming the option, the value and what it may be.
    """
    responses = options.get("response")
    for text in responses if isinstance(responses, list) else [responses] if responses is not None else []:
        phase = str(text).split(":")[0].strip()
        if phase and phase_named(phase, phases) is None:
            raise DesignError(f"design optuna: response {text!r} names the phase {phase!r}, which the schedule "
                              f"does not have (phases: {', '.join(phases)}; or an index 0..{len(phases) - 1})")
    agent = options.get("agent")
    if agent is not None and agent not in agents:
        raise DesignError(f"design optuna: agent {agent!r} is none of the document's agents "
                          f"({', '.join(agents)})")


def journal_name(safe_uid: str) -> str:
    """The study's file in the output folder: ``optuna-<uid>.journal``."""
    return f"optuna-{safe_uid}.journal"


def _choices(f: Factor) -> tuple[Any, ...]:
    levels = tuple(f.levels or ())
    if all(type(v) in _PLAIN for v in levels) and len(set(map(repr, levels))) == len(levels):
        return levels
    return tuple(range(len(levels)))


def distributions(factors: Sequence[Factor]) -> dict[str, Any]:
    """Optuna's distribution of each factor (see the module docstring); a
    conditional factor's is used only where it applies (:func:`_suggest`).

    Raises:
        DesignError: a ``when`` naming an unknown or continuous factor, or a
            cycle of conditions (:func:`~xdoe.design._conditional.check_conditions`).
    """
    from xdoe.design._conditional import check_conditions

    check_conditions(factors)
    optuna = import_optuna()
    d = optuna.distributions
    out: dict[str, Any] = {}
    for f in factors:
        if f.levels is not None:
            out[f.name] = d.CategoricalDistribution(_choices(f))
        elif f.integer:
            out[f.name] = d.IntDistribution(math.ceil(f.low), math.floor(f.high), log=f.scale == "log")
        else:
            out[f.name] = d.FloatDistribution(f.low, f.high, log=f.scale == "log")
    return out


def _suggest(trial: Any, factors: Sequence[Factor], dists: dict[str, Any]) -> None:
    """Suggest the trial's parameters define-by-run, parents first
    (:func:`~xdoe.design._conditional.parents_first`): a conditional factor
    only where its parents' levels are those of its ``when``
    (:func:`~xdoe.design._conditional.applies`, the rule ``make_design``
    collapses designs by). Without conditions, the same calls as
    ``study.ask(dists)`` in factor order."""
    from xdoe.design._conditional import applies, parents_first

    optuna = import_optuna()
    d = optuna.distributions
    indices: dict[int, int] = {}
    for j in parents_first(factors):
        f = factors[j]
        if f.when and not applies(factors, f, indices):
            continue
        dist = dists[f.name]
        if isinstance(dist, d.CategoricalDistribution):
            indices[j] = list(dist.choices).index(trial.suggest_categorical(f.name, dist.choices))
        elif isinstance(dist, d.IntDistribution):
            trial.suggest_int(f.name, dist.low, dist.high, log=dist.log)
        else:
            trial.suggest_float(f.name, dist.low, dist.high, log=dist.log)


def _point(factors: Sequence[Factor], params: dict[str, Any]) -> list[float]:
    """A trial's parameters as a design row: level index, or unit position
    (``0`` for a conditional factor the trial lacks: inactive)."""
    row = []
    for f in factors:
        if f.name not in params:
            row.append(0.0)
            continue
        v = params[f.name]
        if f.levels is not None:
            row.append(float(_choices(f).index(v)))
            continue
        low, high, x = float(f.low), float(f.high), float(v)
        u = (math.log(x / low) / math.log(high / low)) if f.scale == "log" else (x - low) / (high - low)
        row.append(min(max(float(f"{u:.12g}"), 0.0), 1.0))  # the manifest's precision (coded values)
    return row


def study_params(design: Any, i: int) -> dict[str, Any]:
    """Design point ``i``'s values as Optuna's parameters (what its runs
    hold; an inactive conditional factor left out)."""
    from xdoe.design._factors import round_continuous

    row, on = design.row(i)
    out: dict[str, Any] = {}
    for j, f in enumerate(design.factors):
        if not on[j]:
            continue
        if f.levels is not None:
            out[f.name] = _choices(f)[int(round(row[j]))]
        else:
            v = round_continuous(f.value(row[j]))
            out[f.name] = v if f.integer else min(max(float(v), float(f.low)), float(f.high))
    return out


def _sampler(settings: OptunaSettings, seed: int, number: int) -> Any:
    """A fresh sampler for trial ``number``, seeded ``SeedSequence(seed, spawn_key=(37, number))``."""
    optuna = import_optuna()
    s = seed_word(int(seed), SEED_KEY, int(number))
    start = {} if settings.startup_trials is None else {"n_startup_trials": int(settings.startup_trials)}
    name = settings.sampler
    if name == "random":
        return optuna.samplers.RandomSampler(seed=s)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=s, **start)
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=s, population_size=max(2, settings.batch))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # experimental-feature warnings
        if name == "cmaes":
            try:
                import cmaes  # noqa: F401  (Optuna's CmaEsSampler needs it)
            except ImportError:
                from xdoe._extras import install_command

                raise InputError("design optuna: sampler cmaes needs the cmaes package: "
                                 f"{install_command('optuna')}") from None
            return optuna.samplers.CmaEsSampler(seed=s, warn_independent_sampling=False, **start)
        try:
            import torch  # noqa: F401  (Optuna's GPSampler needs it)
        except ImportError:
            raise InputError("design optuna: sampler gp needs torch: pip install torch (CPU build: "
                             "--index-url https://download.pytorch.org/whl/cpu)") from None
        return optuna.samplers.GPSampler(seed=s, **start)


def scratch_copy(study: Any) -> Any:
    """An in-memory copy of ``study`` (its trials, with their system
    attributes, and the study's system attributes, where NSGA-II caches its
    parents), in which :func:`_ask` lets the sampler work."""
    optuna = import_optuna()
    copy = optuna.create_study(directions=list(study.directions))
    copy.add_trials(study.get_trials(deepcopy=False))
    for key, value in study._storage.get_study_system_attrs(study._study_id).items():
        copy._storage.set_study_system_attr(copy._study_id, key, value)
    return copy


def _ask(study: Any, factors: Sequence[Factor], settings: OptunaSettings, seed: int, dists: dict[str, Any], *,
         fixed: dict[str, Any] | None = None, scratch: Any = None) -> Any:
    """Ask trial ``len(trials)`` with the sampler of its number (:func:`_sampler`;
    ``fixed``: its parameters given, a design point) in ``scratch``, an
    in-memory copy of ``study`` (:func:`scratch_copy`; made when ``None``, and
    kept equal to ``study`` by adding each trial to both), then add the asked
    trial to ``study`` whole, in one write: a process killed while the sampler
    works leaves the study without the trial, never with part of its
    parameters (each of Optuna's suggestions is a journal write of its own).
    Returns the trial (``FrozenTrial``, ``RUNNING``)."""
    scratch = scratch_copy(study) if scratch is None else scratch
    number = len(scratch.get_trials(deepcopy=False))
    if len(study.get_trials(deepcopy=False)) != number:
        raise InputError(f"the Optuna study {study.study_name!r} changed while xdoe asked trial {number}: another "
                         "process added trials to it; run one xrun optimize per study")
    scratch.sampler = _sampler(settings, seed, number)
    before = dict(scratch._storage.get_study_system_attrs(scratch._study_id))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fixed is not None:
            scratch.enqueue_trial(fixed)
        _suggest(scratch.ask(), factors, dists)
    asked = scratch.get_trials(deepcopy=False)[number]
    for key, value in scratch._storage.get_study_system_attrs(scratch._study_id).items():
        if before.get(key, _MISSING) != value:  # e.g. NSGA-II's cache of a generation's parents
            study._storage.set_study_system_attr(study._study_id, key, value)
    study.add_trial(asked)
    if len(study.get_trials(deepcopy=False)) != number + 1:
        raise InputError(f"the Optuna study {study.study_name!r} numbered a new trial other than {number}: another "
                         "process added trials to it; run one xrun optimize per study")
    return asked


_MISSING = object()


def first_batch(factors: Sequence[Factor], options: dict[str, Any], seed: Any) -> tuple[Any, dict[str, Any]]:
    """``(points, info)`` of the design's first batch: the first ``batch``
    trials asked from an empty study in memory (the same ones
    :func:`sync_study` enqueues into the journal)."""
    import numpy as np

    from xdoe.design._common import check_seed

    check_seed(seed)
    if not isinstance(seed, int):
        raise DesignError("design optuna needs an int seed (the document's seed)")
    if not factors:
        raise DesignError("design optuna needs factors to search over")
    settings = OptunaSettings.of(options)
    dists = distributions(factors)
    optuna = import_optuna()
    study = optuna.create_study(directions=list(settings.directions))
    scratch = scratch_copy(study)
    rows = [_point(factors, _ask(study, factors, settings, seed, dists, scratch=scratch).params)
            for _ in range(min(settings.batch, settings.trials))]
    return np.array(rows, float).reshape(-1, len(factors)), settings.info()


def open_study(path: Path, name: str, settings: OptunaSettings) -> Any:
    """The study ``name`` in the journal file ``path`` (created when missing)."""
    optuna = import_optuna()
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    storage = JournalStorage(JournalFileBackend(str(path)))
    if name in {s.study_name for s in storage.get_all_studies()}:  # opened: nothing written to the journal
        return optuna.load_study(study_name=name, storage=storage)
    return optuna.create_study(study_name=name, storage=storage, directions=list(settings.directions))


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if set(a) != set(b):
        return False
    for k, x in a.items():
        y = b[k]
        if isinstance(x, float) or isinstance(y, float):
            if not (isinstance(x, (int, float)) and isinstance(y, (int, float))) or not math.isclose(
                    float(x), float(y), rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif x != y:
            return False
    return True


def sync_study(study: Any, design: Any, settings: OptunaSettings, seed: int) -> None:
    """Make the study hold every design point as its trial of the same
    number: points it lacks (a journal lost, or xgen killed before it wrote
    one) are enqueued and asked, so their parameters are exactly the
    points'. Trials asked beyond the design (a batch asked, then killed
    before its runs were written) are left for :func:`next_batch`.

    Raises:
        InputError: a trial's parameters differ from its design point's (the
            journal belongs to another study or document).
    """
    dists = distributions(design.factors)
    trials = study.get_trials(deepcopy=False)
    scratch = None
    for i in range(len(design)):
        params = study_params(design, i)
        if i < len(trials):
            if not _same(trials[i].params, params):
                raise InputError(f"trial {i} of the Optuna study {study.study_name!r} has parameters "
                                 f"{trials[i].params}, but design point {i} of the manifest is {params}: the "
                                 "journal belongs to another design; move it away (the study is rebuilt)")
            continue
        scratch = scratch_copy(study) if scratch is None else scratch
        _ask(study, design.factors, settings, seed, dists, fixed=params, scratch=scratch)


def next_batch(study: Any, factors: Sequence[Factor], settings: OptunaSettings, seed: int, have: int) -> list[dict]:
    """The parameters of trials ``have ..`` (at most ``batch``, up to
    ``trials`` in all): those asked already (by a process killed before it
    wrote them), then new ones asked one by one (:func:`_ask`)."""
    count = max(0, min(settings.batch, settings.trials - have))
    dists = distributions(factors)
    trials = study.get_trials(deepcopy=False)
    out = [dict(t.params) for t in trials[have:have + count]]
    scratch = scratch_copy(study) if len(out) < count else None
    while len(out) < count:
        out.append(dict(_ask(study, factors, settings, seed, dists, scratch=scratch).params))
    return out


def batch_points(factors: Sequence[Factor], params: list[dict]) -> Any:
    """Coded rows (``2 u - 1``; level ``i`` of ``k`` at ``2 i / (k - 1) - 1``;
    NaN for a conditional factor a trial lacks) of trials' parameters, for
    an ``xgen augment`` block (:class:`~xdoe.design.runfiles.AugmentedRuns`)."""
    import numpy as np

    rows = np.array([_point(factors, p) for p in params], float).reshape(-1, len(factors))
    for j, f in enumerate(factors):
        if f.levels is not None:
            k = len(f.levels)
            rows[:, j] = rows[:, j] / (k - 1) if k > 1 else 0.5
    coded = np.array([[float(f"{x:.12g}") for x in r] for r in 2 * rows - 1], float).reshape(-1, len(factors))
    for i, p in enumerate(params):
        for j, f in enumerate(factors):
            if f.name not in p:
                coded[i, j] = np.nan
    return coded


@dataclass(frozen=True)
class PrunedTrial:
    """A trial whose runs ``run_config.prune`` ended early (one or more):
    told ``PRUNED``, with ``intermediate`` (step -> value, the trial's runs'
    rung values aggregated per rung) reported first, so that Optuna's value
    of the trial is its last intermediate value (single objective only)."""

    intermediate: dict[int, float]
    runs: int = 1


def _report(study: Any, trial: Any, intermediate: dict[int, float]) -> None:
    """Report the intermediate values the trial lacks (a process killed
    between reporting and telling reported some): idempotent."""
    optuna = import_optuna()
    if len(study.directions) > 1:  # Optuna's report() is single-objective
        return
    live = optuna.trial.Trial(study, trial._trial_id)
    for step, value in sorted(intermediate.items()):
        if step not in trial.intermediate_values and math.isfinite(value):
            live.report(float(value), int(step))


def tell_trials(study: Any, values: dict[int, "list[float] | PrunedTrial | None"]) -> list[int]:
    """Tell each trial its values (``None`` or a NaN: failed; a
    :class:`PrunedTrial`: pruned, with its last intermediate value), in number
    order, skipping trials already finished: telling is idempotent.
    Returns the numbers told now."""
    optuna = import_optuna()
    trials = study.get_trials(deepcopy=False)
    told = []
    for number in sorted(values):
        if number >= len(trials) or trials[number].state.is_finished():
            continue
        vals = values[number]
        if isinstance(vals, PrunedTrial):
            _report(study, trials[number], vals.intermediate)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                study.tell(number, state=optuna.trial.TrialState.PRUNED)
        elif vals is None or any(not math.isfinite(v) for v in vals):
            study.tell(number, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(number, vals[0] if len(vals) == 1 else list(vals))
        told.append(number)
    return told


def trial_runs(runs: Any) -> dict[str, list[str]]:
    """Trial number (= design point) -> the uids of its runs, of a
    :class:`~xdoe.design.runfiles.RunSequence` or an augmented one."""
    from xdoe.design.runfiles import run_uid

    out: dict[str, list[str]] = {}
    for k in range(len(runs)):
        seq, local = runs._segment(k) if hasattr(runs, "_segment") else (runs, k)
        point = seq.first_point + local % seq.n_points
        out.setdefault(str(point), []).append(run_uid(seq._safe_uid, seq.first_run + local))
    return out


def record_study(runs: Any, output: str | Path) -> Path:
    """Create or complete the study of ``runs`` (an optuna design written to
    ``output``) in its journal file (:func:`sync_study`); returns the file."""
    design = runs.design
    experiment = runs.experiment
    path = Path(output) / journal_name(experiment.safe_uid)
    settings = OptunaSettings.of(design.info or {})
    study = open_study(path, experiment.safe_uid, settings)
    sync_study(study, design, settings, int(experiment.model.seed))
    return path
