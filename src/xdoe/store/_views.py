"""The campaign views of :class:`xdoe.store.Store`: status, the episode
table and its export, lineage, and the dashboard's pages.

Each method runs the query of its view module (imported on first use: a run
loads none of them), which documents the arguments and the result in full.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe.store._liveness import HEARTBEAT_TIMEOUT
from xdoe.store._rows import StoreRows

if TYPE_CHECKING:
    from xdoe.store._dashboard import CampaignSummary, Design, RunsPage
    from collections.abc import Iterator

    from xdoe.store._export import ExportResult, SelectedPhase
    from xdoe.store._lineage import RunNode
    from xdoe.store._membership import BranchRun
    from xdoe.store._results_table import EpisodeTable
    from xdoe.store._runview import RunView
    from xdoe.store._scores import ScoreTable
    from xdoe.store._status import CampaignStatus

__all__ = ["StoreViews"]


class StoreViews(StoreRows):
    """The read-only campaign views of a store."""

    def campaign_status(self, output_dir: str | Path | None = None, experiment: str | None = None, *,
                        heartbeat_timeout: float = HEARTBEAT_TIMEOUT, now: _dt.datetime | None = None,
                        hostname: str | None = None, include_branches: bool = False,
                        run: str | None = None) -> "CampaignStatus":
        """The status of every run of a campaign (of the xgen folder
        ``output_dir``, or the runs in the store; ``run``: of that run
        only); see :func:`xdoe.store._status.campaign_status`.

        Raises:
            InputError: ``output_dir`` is unusable or ``experiment`` is not in the store.
            StoreError: the store cannot be read.
        """
        from xdoe.store._status import campaign_status

        return campaign_status(self, output_dir, experiment, heartbeat_timeout=heartbeat_timeout, now=now,
                               hostname=hostname, include_branches=include_branches, run=run)

    def check_experiment(self, experiment: str | None) -> None:
        """Raise :class:`InputError` (naming the experiments there) when
        ``experiment`` is given and has no run in the store."""
        from xdoe.store._export import check_experiment

        check_experiment(self, experiment)

    def selected_phases(self, experiment: str | None = None, *, all_instances: bool = False,
                        include_branches: bool = False) -> list["SelectedPhase"]:
        """The phases ``xrun export`` and the results table read: of the newest
        finished instance of each run (``all_instances``: of every instance)."""
        from xdoe.store._export import selected_phases

        return selected_phases(self, experiment, all_instances=all_instances, include_branches=include_branches)

    def phase_episodes(self, phase: "SelectedPhase") -> "Iterator[tuple[Any, ...]]":
        """The episodes of one of :meth:`selected_phases`, in the order they
        were recorded: ``(worker, episode, agent, steps, reward, objective,
        wall_time, terminated, truncated, cut_by)`` (``xrun export --to``)."""
        from xdoe.store._export import iter_export_rows

        width = len(("experiment", "run", "design_point", "repetition", "seed", "phase", "mode"))
        for row in iter_export_rows(self, [phase], [], {}):  # type: ignore[arg-type]
            yield row[width:]

    def export_episodes(self, path: str | Path, experiment: str | None = None, *, all_instances: bool = False,
                        include_branches: bool = False, batch_rows: int | None = None, overwrite: bool = False,
                        hint: str = "") -> "ExportResult":
        """Write one long table, one row per episode, worker and agent, to
        ``path`` (``.csv``, or ``.parquet`` with pyarrow); columns and errors:
        :func:`xdoe.store._export.export_episodes`."""
        from xdoe.store._export import BATCH_ROWS, export_episodes

        return export_episodes(self, path, experiment, all_instances=all_instances,
                               include_branches=include_branches, overwrite=overwrite, hint=hint,
                               batch_rows=BATCH_ROWS if batch_rows is None else batch_rows)

    def episode_table(self, experiment: str | None = None, *, include_branches: bool = False) -> "EpisodeTable":
        """The episodes of the finished runs as a pandas table (the rows of
        ``xrun export``); see :func:`xdoe.store._results_table.episode_table`."""
        from xdoe.store._results_table import episode_table

        return episode_table(self, experiment, include_branches=include_branches)

    def run_scores(self, experiment: str | None = None, *, phase: str | None = None, metric: str = "objective",
                   stat: str = "mean", op: str | None = None, threshold: float | None = None,
                   keep_cut: bool = False, include_branches: bool = False) -> "ScoreTable":
        """Per run and agent, ``stat`` of ``metric`` over the run's episodes
        of ``phase``, aggregated by the database (the runs and phases of
        :meth:`episode_table`); arguments and errors:
        :func:`xdoe.store._scores.run_scores`."""
        from xdoe.store._scores import run_scores

        return run_scores(self, experiment, phase=phase, metric=metric, stat=stat, op=op, threshold=threshold,
                          keep_cut=keep_cut, include_branches=include_branches)

    def build_lineage(self, experiment: str | None = None, *, run: str | None = None, latest_only: bool = False,
                      heartbeat_timeout: float = HEARTBEAT_TIMEOUT, now: _dt.datetime | None = None,
                      hostname: str | None = None) -> list["RunNode"]:
        """The lineage of the runs in the store (of one experiment, or one run
        uid); see :func:`xdoe.store._lineage.build_lineage`."""
        from xdoe.store._lineage import build_lineage

        return build_lineage(self, experiment, run=run, latest_only=latest_only,
                             heartbeat_timeout=heartbeat_timeout, now=now, hostname=hostname)

    def branch_runs(self, experiment: str | None = None) -> dict[str, "BranchRun"]:
        """The sessions of session trees rooted in the runs (of one
        experiment): ``run uid -> BranchRun``."""
        from xdoe.store._membership import branch_runs

        return branch_runs(self, experiment)

    # -- the dashboard ------------------------------------------------------
    def campaign_summaries(self, *, heartbeat_timeout: float = HEARTBEAT_TIMEOUT, now: _dt.datetime | None = None,
                           design: "Design | None" = None) -> list["CampaignSummary"]:
        """One summary per experiment (counts by status, progress); see
        :func:`xdoe.store._dashboard.campaign_summaries`."""
        from xdoe.store._dashboard import campaign_summaries

        return campaign_summaries(self, heartbeat_timeout=heartbeat_timeout, now=now, design=design)

    def experiment_uids(self) -> list[str]:
        """Every experiment uid in the store, sorted."""
        from xdoe.store._dashboard import experiment_uids

        return experiment_uids(self)

    def data_marker(self) -> tuple[Any, ...]:
        """A fingerprint of the runs, instances, phases and episode rows, in
        a few small queries: equal markers, equal results; see
        :func:`xdoe.store._dashboard.data_marker`."""
        from xdoe.store._dashboard import data_marker

        return data_marker(self)

    def experiment_run_count(self, experiment: str) -> int:
        """The number of run uids of ``experiment``."""
        from xdoe.store._dashboard import experiment_run_count

        return experiment_run_count(self, experiment)

    def campaign_runs(self, experiment: str, *, status: str | None = None, search: str | None = None,
                      sort: str = "design_point", descending: bool = False, page: int = 1, per_page: int = 50,
                      heartbeat_timeout: float = HEARTBEAT_TIMEOUT, cache: dict[int, float] | None = None,
                      design: "Design | None" = None) -> "RunsPage":
        """One page of an experiment's runs, filtered and sorted; see
        :func:`xdoe.store._dashboard.campaign_runs`."""
        from xdoe.store._dashboard import campaign_runs

        return campaign_runs(self, experiment, status=status, search=search, sort=sort, descending=descending,
                             page=page, per_page=per_page, heartbeat_timeout=heartbeat_timeout, cache=cache,
                             design=design)

    def run_view(self, uid: str, instance_id: int | None = None, *,
                 heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> "RunView | None":
        """One run (its newest instance, or ``instance_id``) with its phases
        and checkpoints, or ``None``; see :func:`xdoe.store._runview.run_view`."""
        from xdoe.store._runview import run_view

        return run_view(self, uid, instance_id, heartbeat_timeout=heartbeat_timeout)

    def curve_points(self, instance_id: int, *, after: int = 0, max_points: int = 1000,
                     bin_size: int | None = None) -> dict[str, Any]:
        """The learning-curve points of an instance newer than episode row
        ``after``; see :func:`xdoe.store._runview.curve_points`."""
        from xdoe.store._runview import curve_points

        return curve_points(self, instance_id, after=after, max_points=max_points, bin_size=bin_size)

    def lineage_nodes(self, experiment: str | None, *, limit: int = 400,
                      heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> tuple[list[dict[str, Any]], int]:
        """The lineage graph's nodes (at most ``limit``) and the number of
        runs; see :func:`xdoe.store._runview.lineage_nodes`."""
        from xdoe.store._runview import lineage_nodes

        return lineage_nodes(self, experiment, limit=limit, heartbeat_timeout=heartbeat_timeout)
