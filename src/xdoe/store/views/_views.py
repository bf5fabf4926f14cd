"""The read views of a store, ``store.views``: status, the episode table
and its export, per-run scores, learning curves, lineage, and the
dashboard's pages.

Each method runs the query of its view module in this package (imported on
first use: a run loads none of them), which documents the arguments and the
result in full; the modules run their queries in the transactions of the
store's :class:`~xdoe.store.schema._database.Database`, which the part holds.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe.store._liveness import HEARTBEAT_TIMEOUT

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database
    from xdoe.store.views._dashboard import CampaignSummary, Design, RunsPage
    from collections.abc import Iterator, Sequence

    from xdoe.store.views._export import ExportResult, SelectedPhase
    from xdoe.store.views._lineage import RunNode
    from xdoe.store.views._membership import BranchRun
    from xdoe.store.views._results_table import EpisodeTable
    from xdoe.store.views._runview import RunView
    from xdoe.store.views._scores import ScoreTable
    from xdoe.store.views._status import CampaignStatus

__all__ = ["Views"]


class Views:
    """The read-only views of a store, ``store.views``.

    Args:
        db: the store's database (shared with the other parts).
    """

    def __init__(self, db: "Database") -> None:
        self._db = db

    def campaign_status(self, output_dir: str | Path | None = None, experiment: str | None = None, *,
                        heartbeat_timeout: float = HEARTBEAT_TIMEOUT, now: _dt.datetime | None = None,
                        hostname: str | None = None, include_branches: bool = False,
                        run: str | None = None) -> "CampaignStatus":
        """The status of every run of a campaign (of the xgen folder
        ``output_dir``, or the runs in the store; ``run``: of that run
        only); see :func:`xdoe.store.views._status.campaign_status`.

        Raises:
            InputError: ``output_dir`` is unusable or ``experiment`` is not in the store.
            StoreError: the store cannot be read.
        """
        from xdoe.store.views._status import campaign_status

        return campaign_status(self._db, output_dir, experiment, heartbeat_timeout=heartbeat_timeout, now=now,
                               hostname=hostname, include_branches=include_branches, run=run)

    def check_experiment(self, experiment: str | None) -> None:
        """Raise :class:`InputError` (naming the experiments there) when
        ``experiment`` is given and has no run in the store."""
        from xdoe.store.views._export import check_experiment

        check_experiment(self._db, experiment)

    def selected_phases(self, experiment: str | None = None, *, all_instances: bool = False,
                        include_branches: bool = False) -> list["SelectedPhase"]:
        """The phases ``xrun export`` and the results table read: of the newest
        finished instance of each run (``all_instances``: of every instance)."""
        from xdoe.store.views._export import selected_phases

        return selected_phases(self._db, experiment, all_instances=all_instances, include_branches=include_branches)

    def phase_episodes(self, phase: "SelectedPhase") -> "Iterator[tuple[Any, ...]]":
        """The episodes of one of :meth:`selected_phases`, in the order they
        were recorded: ``(worker, episode, agent, steps, reward, objective,
        wall_time, terminated, truncated, cut_by)`` (``xrun export --to``)."""
        from xdoe.store.views._export import iter_export_rows

        width = len(("experiment", "run", "design_point", "repetition", "seed", "phase", "mode"))
        for row in iter_export_rows(self._db, [phase], [], {}):  # type: ignore[arg-type]
            yield row[width:]

    def export_episodes(self, path: str | Path, experiment: str | None = None, *, all_instances: bool = False,
                        include_branches: bool = False, batch_rows: int | None = None, overwrite: bool = False,
                        hint: str = "") -> "ExportResult":
        """Write one long table, one row per episode, worker and agent, to
        ``path`` (``.csv``, or ``.parquet`` with pyarrow); columns and errors:
        :func:`xdoe.store.views._export.export_episodes`."""
        from xdoe.store.views._export import BATCH_ROWS, export_episodes

        return export_episodes(self._db, path, experiment, all_instances=all_instances,
                               include_branches=include_branches, overwrite=overwrite, hint=hint,
                               batch_rows=BATCH_ROWS if batch_rows is None else batch_rows)

    def episode_table(self, experiment: str | None = None, *, include_branches: bool = False) -> "EpisodeTable":
        """The episodes of the finished runs as a pandas table (the rows of
        ``xrun export``); see :func:`xdoe.store.views._results_table.episode_table`."""
        from xdoe.store.views._results_table import episode_table

        return episode_table(self._db, experiment, include_branches=include_branches)

    def run_scores(self, experiment: str | None = None, *, phase: str | None = None, metric: str = "objective",
                   stat: str = "mean", op: str | None = None, threshold: float | None = None,
                   keep_cut: bool = False, include_branches: bool = False,
                   runs: "Sequence[str] | None" = None) -> "ScoreTable":
        """Per run and agent, ``stat`` of ``metric`` over the run's episodes
        of ``phase``, aggregated by the database (the runs and phases of
        :meth:`episode_table`); arguments and errors:
        :func:`xdoe.store.views._scores.run_scores`."""
        from xdoe.store.views._scores import run_scores

        return run_scores(self._db, experiment, phase=phase, metric=metric, stat=stat, op=op, threshold=threshold,
                          keep_cut=keep_cut, include_branches=include_branches, runs=runs)

    def build_lineage(self, experiment: str | None = None, *, run: str | None = None, latest_only: bool = False,
                      heartbeat_timeout: float = HEARTBEAT_TIMEOUT, now: _dt.datetime | None = None,
                      hostname: str | None = None) -> list["RunNode"]:
        """The lineage of the runs in the store (of one experiment, or one run
        uid); see :func:`xdoe.store.views._lineage.build_lineage`."""
        from xdoe.store.views._lineage import build_lineage

        return build_lineage(self._db, experiment, run=run, latest_only=latest_only,
                             heartbeat_timeout=heartbeat_timeout, now=now, hostname=hostname)

    def branch_runs(self, experiment: str | None = None) -> dict[str, "BranchRun"]:
        """The sessions of session trees rooted in the runs (of one
        experiment): ``run uid -> BranchRun``."""
        from xdoe.store.views._membership import branch_runs

        return branch_runs(self._db, experiment)

    # -- the dashboard ------------------------------------------------------
    def campaign_summaries(self, *, heartbeat_timeout: float = HEARTBEAT_TIMEOUT, now: _dt.datetime | None = None,
                           design: "Design | None" = None) -> list["CampaignSummary"]:
        """One summary per experiment (counts by status, progress); see
        :func:`xdoe.store.views._dashboard.campaign_summaries`."""
        from xdoe.store.views._dashboard import campaign_summaries

        return campaign_summaries(self._db, heartbeat_timeout=heartbeat_timeout, now=now, design=design)

    def experiment_uids(self) -> list[str]:
        """Every experiment uid in the store, sorted."""
        from xdoe.store.views._dashboard import experiment_uids

        return experiment_uids(self._db)

    def data_marker(self) -> tuple[Any, ...]:
        """A fingerprint of the runs, instances, phases and episode rows, in
        a few small queries: equal markers, equal results; see
        :func:`xdoe.store.views._dashboard.data_marker`."""
        from xdoe.store.views._dashboard import data_marker

        return data_marker(self._db)

    def experiment_run_count(self, experiment: str) -> int:
        """The number of run uids of ``experiment``."""
        from xdoe.store.views._dashboard import experiment_run_count

        return experiment_run_count(self._db, experiment)

    def campaign_runs(self, experiment: str, *, status: str | None = None, search: str | None = None,
                      sort: str = "design_point", descending: bool = False, page: int = 1, per_page: int = 50,
                      heartbeat_timeout: float = HEARTBEAT_TIMEOUT, cache: dict[int, float] | None = None,
                      design: "Design | None" = None) -> "RunsPage":
        """One page of an experiment's runs, filtered and sorted; see
        :func:`xdoe.store.views._dashboard.campaign_runs`."""
        from xdoe.store.views._dashboard import campaign_runs

        return campaign_runs(self._db, experiment, status=status, search=search, sort=sort, descending=descending,
                             page=page, per_page=per_page, heartbeat_timeout=heartbeat_timeout, cache=cache,
                             design=design)

    def run_view(self, uid: str, instance_id: int | None = None, *,
                 heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> "RunView | None":
        """One run (its newest instance, or ``instance_id``) with its phases
        and checkpoints, or ``None``; see :func:`xdoe.store.views._runview.run_view`."""
        from xdoe.store.views._runview import run_view

        return run_view(self._db, uid, instance_id, heartbeat_timeout=heartbeat_timeout)

    def curve_points(self, instance_id: int, *, after: int = 0, max_points: int = 1000,
                     bin_size: int | None = None) -> dict[str, Any]:
        """The learning-curve points of an instance newer than episode row
        ``after``; see :func:`xdoe.store.views._curves.curve_points`."""
        from xdoe.store.views._curves import curve_points

        return curve_points(self._db, instance_id, after=after, max_points=max_points, bin_size=bin_size)

    def lineage_nodes(self, experiment: str | None, *, limit: int = 400,
                      heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> tuple[list[dict[str, Any]], int]:
        """The lineage graph's nodes (at most ``limit``) and the number of
        runs; see :func:`xdoe.store.views._runview.lineage_nodes`."""
        from xdoe.store.views._runview import lineage_nodes

        return lineage_nodes(self._db, experiment, limit=limit, heartbeat_timeout=heartbeat_timeout)
