"""Runs logged to TensorBoard and MLflow (issue 36), besides the store.

``xrun experiment-start --log tensorboard:DIR`` / ``--log mlflow:URI`` (or
``run_config: {log: [...]}``) logs each run's episodes as they are recorded:
each run's process opens its trackers (:func:`open_live`) and hands its
recorder a :class:`RunLog` as an observer. ``xrun export --to`` writes the
finished runs of a store the same way (:func:`export_runs`). The libraries
(tensorboard, mlflow) come with the ``tensorboard`` and ``mlflow`` extras
and are imported only when a tracker opens. See docs/tracking.md.
"""

from __future__ import annotations

from xdoe.documents import LogTarget, parse_log_target
from xdoe.tracking._export import TrackerExport, export_runs
from xdoe.tracking._mlflow import MlflowTracker
from xdoe.tracking._runlog import TRACKER_MODULES, RunLog, make_tracker, missing_extras, open_live
from xdoe.tracking._tensorboard import TensorBoardTracker
from xdoe.tracking._tracker import EpisodeLog, TrackedRun, Tracker, env_step_tag, metric_tag

__all__ = [
    "Tracker", "TrackedRun", "EpisodeLog", "TensorBoardTracker", "MlflowTracker", "RunLog", "make_tracker",
    "open_live", "missing_extras", "export_runs", "TrackerExport", "LogTarget", "parse_log_target",
    "metric_tag", "env_step_tag", "TRACKER_MODULES",
]
