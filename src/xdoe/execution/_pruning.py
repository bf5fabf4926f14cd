"""Stopping poor runs early: ``run_config: {prune: {...}}`` (issue 37).

A run with a prune rule (:class:`~xdoe.documents.PruneSpec`) reports its
intermediate value at every *rung* of the pruned phase: the first episode
end at which the phase's environment steps (all workers together) reach
the rung's step. The value is the mean of the rule's metric over the
episodes of the rule's agent that ended since the previous rung (or over the
last ``window`` episodes). The decision is Optuna's pruner's, asked on a
study rebuilt for this one question (:func:`prune_decision`):

* every *other* run of the same experiment that recorded a value at this
  rung of the same phase (the store's ``rung`` rows, :meth:`store.rungs.peer_rungs <xdoe.store.runs._rungs.Rungs.peer_rungs>`) is a trial with its recorded
  values at rungs ``0..k``; it is ``PRUNED`` when it was pruned at this very
  rung, else ``COMPLETE`` (a run that reached the rung counts as a complete
  trial: the decision depends on the recorded values, not on which runs
  happen to have finished);
* this run is a running trial with its own values at rungs ``0..k``;
* with ``batch_runs`` (:class:`~xdoe.documents.PruneSpec`), only the
  peers of the batches of run numbers before this run's count, so that a
  study run batch by batch (``xrun optimize``) decides alike under any
  ``--jobs``;
* trials are numbered by the run's number (the ``-NNNN`` of xgen's run uids,
  so Hyperband's bracket of a run never depends on which runs have started;
  runs without one after those, by uid), placeholders (``FAIL``) filling the
  gaps.

So the same store state gives the same decisions. Each decision is recorded
(``rung`` row: value, pruned, how many peers it saw) before the run goes on
or ends ``pruned``; a resumed instance takes its recorded decisions instead
of asking again. With ``--jobs 1`` runs execute in order and every decision
is reproducible run for run; with ``--jobs N`` which peers have reached a
rung when a run asks depends on timing (as in Optuna's own asynchronous
successive halving): the rung rows say what each decision saw.
"""

from __future__ import annotations

import copy
import math
import re
from collections import deque
from typing import TYPE_CHECKING, Any, Iterable

from xdoe.errors import InputError, RunPruned
from xdoe.execution._hooks import EpisodeEnd, Hook

if TYPE_CHECKING:
    from xdoe.documents import PruneSpec
    from xdoe.execution._plan import PhasePlan, RunPlan
    from xdoe.store import PeerRungs, RunRecorder

__all__ = ["PruneTracker", "prune_decision", "require_optuna", "pruned_phase", "run_number"]

_NUMBER = re.compile(r"-(\d{1,6})$")
_STUDY = "xdoe-prune"


def require_optuna() -> Any:
    """The ``optuna`` module.

    Raises:
        InputError: Optuna is not installed (names the extra to install).
    """
    try:
        import optuna
    except ImportError:
        from xdoe._extras import install_command

        raise InputError("run_config.prune needs the 'optuna' extra (optuna is not installed): "
                         f"{install_command('optuna')}") from None
    return optuna


def pruned_phase(plan: "RunPlan") -> "PhasePlan | None":
    """The phase ``plan``'s prune rule applies to (its ``phase``: a name or
    an index; default the first ``train`` phase), ``None`` without a rule.

    Raises:
        InputError: no such phase (or no train phase to default to).
    """
    spec = plan.prune
    if spec is None:
        return None
    for phase in plan.phases:
        if spec.phase is None and phase.mode == "train":
            return phase
        if spec.phase is not None and (phase.name == str(spec.phase) or str(phase.index) == str(spec.phase)):
            return phase
    what = "no train phase" if spec.phase is None else f"no phase {spec.phase!r}"
    raise InputError(f"run {plan.uid}: run_config.prune: {what} to prune "
                     f"(phases: {', '.join(p.name for p in plan.phases)})")


def run_number(uid: str) -> int | None:
    """The run's number in its experiment: the ``NNNN`` of xgen's
    ``<experiment>-NNNN`` uids, ``None`` for other uids."""
    match = _NUMBER.search(uid)
    return int(match.group(1)) if match else None


def _pruner(optuna: Any, spec: "PruneSpec") -> Any:
    p = optuna.pruners
    if spec.method == "successive_halving":
        return p.SuccessiveHalvingPruner(min_resource=spec.min_steps, reduction_factor=spec.reduction_factor,
                                         min_early_stopping_rate=spec.min_early_stopping_rate,
                                         bootstrap_count=spec.bootstrap_count)
    if spec.method == "hyperband":
        return p.HyperbandPruner(min_resource=spec.min_steps, max_resource=spec.max_steps,
                                 reduction_factor=spec.reduction_factor, bootstrap_count=spec.bootstrap_count)
    return p.MedianPruner(n_startup_trials=spec.n_startup_trials, n_warmup_steps=0, interval_steps=1)


def _study(optuna: Any, spec: "PruneSpec", pruner: Any, sampler: Any = None) -> Any:
    return optuna.create_study(storage=optuna.storages.InMemoryStorage(), study_name=_STUDY,
                               direction=spec.direction, pruner=pruner,
                               sampler=sampler or optuna.samplers.RandomSampler(seed=0))


def _peer_trial(optuna: Any, spec: "PruneSpec", pruner: Any, number: int, values: dict[int, float],
                pruned: bool, sampler: Any = None) -> Any:
    """Another run as a finished trial: its values at the rungs' steps and
    what the pruner keeps of them on the trial itself (the halving pruners
    record each rung's value in the trial's system attributes: found by
    replaying the run's reports through the pruner on a study of its own,
    numbered as in the real one, so the cost grows with the runs, not their square)."""
    from optuna.trial import TrialState, create_trial

    attrs: dict[str, Any] = {}
    if spec.method != "median":
        scratch = _study(optuna, spec, pruner, sampler)
        trial = scratch.ask()
        for r in sorted(values):
            trial.report(values[r], spec.rung_step(r))
            frozen = copy.copy(scratch.get_trials(deepcopy=False)[-1])
            frozen.number = number  # Hyperband's bracket is the number's
            pruner.prune(scratch, frozen)
        attrs = dict(scratch.get_trials(deepcopy=False)[-1].system_attrs)
    steps = {spec.rung_step(r): v for r, v in values.items()}
    last = values[max(values)]
    if pruned or math.isnan(last):
        return create_trial(state=TrialState.PRUNED, intermediate_values=steps, system_attrs=attrs)
    return create_trial(value=last, intermediate_values=steps, system_attrs=attrs)


def prune_decision(spec: "PruneSpec", rung: int, own: dict[int, float], number: int | None,
                   peers: Iterable[tuple[int | None, str, dict[int, float], bool]], uid: str = "") -> bool:
    """Whether Optuna's pruner of ``spec`` prunes a run with values ``own``
    (rung -> value, up to ``rung``) at ``rung``, given the ``peers`` —
    ``(number, uid, values up to rung, pruned at rung)`` — on an in-memory
    study built from them alone (see the module docstring)."""
    optuna = require_optuna()
    from optuna.trial import TrialState, create_trial

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = _pruner(optuna, spec)
    study = _study(optuna, spec, pruner)
    big = 10 ** 7
    entries = sorted([(big if n is None else n, u, values, pruned, False) for n, u, values, pruned in peers]
                     + [(big if number is None else number, uid, own, False, True)], key=lambda e: (e[0], e[1]))
    mine = None
    made = 0  # trials in the study (never study.trials: it copies them all)
    for n, _uid, values, pruned, is_self in entries:
        if n < big and made < n:  # placeholders: the trial's number is the run's
            study.add_trials([create_trial(state=TrialState.FAIL) for _ in range(n - made)])
            made = n
        if is_self:
            mine = study.ask()
            for r in sorted(values):
                if r < rung:
                    mine.report(values[r], spec.rung_step(r))
                    mine.should_prune()  # the halving pruners record the rung's value on the trial
        else:
            study.add_trial(_peer_trial(optuna, spec, pruner, made, values, pruned, study.sampler))
        made += 1
    assert mine is not None
    mine.report(own[rung], spec.rung_step(rung))
    return bool(mine.should_prune())


class PruneTracker(Hook):
    """The prune rule of one run's pruned phase, a hook: fed every episode end
    (:meth:`on_episode_end`), it decides at each rung and raises
    :class:`~xdoe.errors.RunPruned` when the run is pruned.

    Args:
        plan: the run.
        phase: the pruned phase.
        recorder: the run's started recorder (its store holds the rungs).
        kept_phase_id: the phase row a resumed instance continues: its kept
            episodes are read back so the rungs go on where they were.
    """

    def __init__(self, plan: "RunPlan", phase: "PhasePlan", recorder: "RunRecorder",
                 kept_phase_id: int | None = None) -> None:
        assert plan.prune is not None and recorder.instance_id is not None
        require_optuna()
        self.spec = plan.prune
        self.plan, self.phase, self.recorder = plan, phase, recorder
        self.store = recorder.store
        self.agent = self.spec.agent or phase.agents[0].name
        self.values: deque[float] = deque(maxlen=self.spec.window)  # the episodes since the last rung
        self.own = self.store.rungs.own_rungs(recorder.instance_id, phase.index)  # a resumed instance's decisions
        self.rung = 0
        self.steps = 0
        self.last = math.nan
        if kept_phase_id is not None:
            for steps, value in self.store.rungs.phase_episode_values(kept_phase_id, self.agent, self.spec.metric):
                self._feed(value, self.steps + steps, decide=False)

    def on_episode_end(self, end: EpisodeEnd) -> None:
        """An episode of the pruned phase ended.

        Raises:
            RunPruned: the rule prunes the run at the rung just reached.
        """
        episode = end.episode
        values = episode.rewards if self.spec.metric == "reward" else episode.objectives
        if self.agent in values:
            self._feed(float(values[self.agent]), episode.phase.steps, decide=True)

    def _feed(self, value: float, steps: int, *, decide: bool) -> None:
        self.values.append(value)
        self.steps = steps
        while steps >= self.spec.rung_step(self.rung):
            recorded = self.own.get(self.rung)
            if not decide and (recorded is None or recorded.pruned):
                return  # read back to here: the next episode that ends decides (or prunes) again
            if self.values:  # several rungs in one episode: each takes the same (last) window
                self.last = sum(self.values) / len(self.values)
                if self.spec.window is None:
                    self.values.clear()
            if not decide:
                self.rung += 1
                continue
            row = self._decide(self.rung, self.last)
            self.rung += 1
            if row.pruned:
                raise RunPruned(f"pruned at rung {row.rung} ({self.spec.method}, step {row.step} of phase "
                                f"{self.phase.name!r}): {self.spec.metric} {row.value:.6g} against "
                                f"{row.peers} other run(s)")

    def _decide(self, rung: int, value: float) -> Any:
        from xdoe.store import RungRow

        recorded = self.own.get(rung)
        if recorded is not None:  # decided before this instance was interrupted: the same decision
            return recorded
        self.recorder.flush()  # every episode of this run so far is in the store before others read its rung
        peers: list[PeerRungs] = self.store.rungs.peer_rungs(self.plan.experiment_uid, self.phase.index, rung,
                                                        self.plan.uid)
        number, size = run_number(self.plan.uid), self.spec.batch_runs
        if size is not None and number is not None:  # only the batches before this run's (PruneSpec.batch_runs)
            below = number - number % size
            peers = [p for p in peers if (n := run_number(p.run)) is not None and n < below]
        own = {r: row.value for r, row in self.own.items() if r < rung}
        own[rung] = value
        pruned = prune_decision(self.spec, rung, own, run_number(self.plan.uid),
                                [(run_number(p.run), p.run, p.values, p.pruned) for p in peers], self.plan.uid)
        row = RungRow(rung, self.spec.rung_step(rung), value, pruned, len(peers))
        assert self.recorder.instance_id is not None
        self.store.rungs.record_rung(self.recorder.instance_id, self.phase.index, row)
        self.own[rung] = row
        return row
