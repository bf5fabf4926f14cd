"""``xrun export --to tensorboard|mlflow``: the finished runs of the store
written to a tracker as live logging would have written them
(:class:`~xdoe.tracking.RunLog`), one tracker run per run instance."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdoe.documents import LogTarget
from xdoe.tracking._runlog import RunLog, make_tracker
from xdoe.tracking._tracker import ENDED_STATUSES, TrackedRun

if TYPE_CHECKING:
    from xdoe.store import Store

__all__ = ["TrackerExport", "export_runs"]


@dataclass(frozen=True)
class TrackerExport:
    """What :func:`export_runs` did: ``written`` runs (``episodes`` rows),
    ``kept`` runs the destination held already, in ``seconds``."""

    target: str
    written: int
    kept: int
    episodes: int
    seconds: float


def export_runs(store: "Store", target: LogTarget | str, experiment: str | None = None, *,
                all_instances: bool = False, include_branches: bool = False,
                replace: bool = False) -> TrackerExport:
    """Write the runs ``xrun export`` would write (per run, the newest
    finished instance, else the newest; ``all_instances``: every one) to
    ``target``; with ``include_branches`` the sessions of the trees grown
    from them, grouped with ``experiment`` (with every experiment, ``None``:
    under ``no-experiment``). A run instance the destination holds already is kept unless
    ``replace``, or unless its copy was written before the instance ended
    (exported while it ran, a live log cut off) and it has ended since: that
    copy is written anew from the store. An instance still running is
    written as far as the store holds it, left open in the tracker.

    Raises:
        StoreError: the store cannot be read.
        Exception: whatever the tracker's library raises (an export is not a
            run: it stops at the first error).
    """
    started = time.perf_counter()
    phases = store.views.selected_phases(experiment, all_instances=all_instances, include_branches=include_branches)
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for phase in phases:
        key = (phase.run, phase.instance_id) if all_instances else (phase.run,)
        groups.setdefault(key, []).append(phase)
    instances: dict[str, dict[int, Any]] = {}
    written = kept = episodes = 0
    for group in groups.values():
        first = group[0]
        if first.run not in instances:
            instances[first.run] = {i.id: i for i in store.runs.instances(run_uid=first.run)}
        instance = instances[first.run][max(p.instance_id for p in group)]  # a resumed one may borrow phases
        # a branch (no experiment of its own) is grouped with the experiment whose tree it grew from
        owner = first.experiment if first.experiment is not None or first.branch is None else experiment
        info = TrackedRun(experiment=owner, run=first.run, instance=instance.uuid, levels=first.levels,
                       design_point=first.design_point, repetition=first.repetition, seed=first.seed,
                       content_hash=instance.content_hash, branch=first.branch)
        tracker = make_tracker(target)
        held = None if replace else tracker.held(info)
        if held is not None and (held or instance.status not in ENDED_STATUSES):
            kept += 1  # a complete copy, or one of an instance still going on (a live log may be writing it)
            continue
        log = RunLog([tracker], info)
        log.open(replace=replace or held is not None)  # a copy written before the instance ended: anew
        for phase in sorted(group, key=lambda p: p.index):
            log.phase_started(phase.index, phase.name, phase.mode)
            for row in store.views.phase_episodes(phase):
                log.episode_finished(*row[:6])
        log.run_finished(instance.status)
        written += 1
        episodes += log.episodes
    return TrackerExport(str(target), written, kept, episodes, time.perf_counter() - started)
