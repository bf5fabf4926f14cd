"""MLflow: one MLflow experiment per xdoe experiment, one MLflow run per run
instance (named by the run uid), written by ``mlflow.MlflowClient`` (the
``mlflow`` extra: mlflow-skinny): params = the factor levels, tags =
``xdoe.*`` (run uid, instance, design point, repetition, seed), metrics per
episode with step = the episode index, sent in batches (``log_batch``).
Statuses: FINISHED, FAILED (a failed or pruned instance), KILLED (an
interrupted one; a copy a killed process left RUNNING, once its run starts
again: :meth:`MlflowTracker.end_others`, and the copy a resume replaces).

A file store (``file:///abs/mlruns`` or a plain folder) is MLflow's own
folder format; MLflow 3.13 and later refuse it unless
``MLFLOW_ALLOW_FILE_STORE=true``, which is set for this process when the
target is one (a database or server URI needs nothing)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

from xdoe.tracking._tracker import (ENDED_STATUSES, EpisodeLog, TrackedRun, Tracker, env_step_tag, metric_tag,
                                   run_params, run_tags)

__all__ = ["MlflowTracker", "is_file_store"]

#: metrics sent per ``log_batch`` at most (MLflow's limit is 1000 per request)
BATCH = 900
#: characters of a param value kept (older MLflow servers refuse longer ones)
PARAM_CHARS = 500
#: seconds a metric may wait in the buffer (MLflow's UI shows a live run this late)
FLUSH_SECS = 2.0

_STATUS = {"finished": "FINISHED", "failed": "FAILED", "interrupted": "KILLED"}
#: the tag of a deleted MLflow run naming the run that replaced it (a resumed instance's copy, written anew)
REPLACED_TAG = "xdoe.replaced_by"
#: RUNNING runs of an experiment searched at most for those of dead instances (:meth:`MlflowTracker.end_others`)
SEARCH_MAX = 1000
#: the tag a closed run gets when its instance has ended (``finished``, ``failed``, ``pruned``): a complete copy
STATUS_TAG = "xdoe.status"


@contextlib.contextmanager
def _file_store_lock(uri: str) -> Iterator[None]:
    """An exclusive ``flock`` on ``<file store>/.xdoe.lock`` (nothing for
    other URIs, or where ``fcntl`` is missing)."""
    if not is_file_store(uri):
        yield
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    from urllib.parse import unquote, urlparse

    folder = Path(unquote(urlparse(uri).path) if uri.startswith("file:") else uri)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".xdoe.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def is_file_store(uri: str) -> bool:
    """Whether ``uri`` is MLflow's file store (``file:`` or a plain path)."""
    return uri.startswith("file:") or "://" not in uri


class MlflowTracker(Tracker):
    """Logs runs to the MLflow tracking URI ``where``."""

    kind = "mlflow"

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.run_id: str | None = None
        self._client: Any = None
        self._metrics: list[Any] = []
        self._sent = 0.0

    def client(self) -> Any:
        """The ``MlflowClient`` of ``where`` (made on first use)."""
        if self._client is None:
            if is_file_store(self.where):
                os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            from mlflow import MlflowClient

            self._client = MlflowClient(tracking_uri=self.where)
        return self._client

    def experiment_id(self, name: str) -> str:
        """The id of the MLflow experiment ``name``, created when missing
        (another process creating it meanwhile is fine: a file store's
        look-up and creation hold a lock file in its folder, as the store's
        own check of the name is not atomic across processes)."""
        with _file_store_lock(self.where):
            return self._experiment_id(name)

    def _experiment_id(self, name: str) -> str:
        from mlflow.exceptions import MlflowException

        client = self.client()
        found = client.get_experiment_by_name(name)
        if found is not None:
            return str(found.experiment_id)
        try:
            return str(client.create_experiment(name))
        except MlflowException:
            found = client.get_experiment_by_name(name)
            if found is None:
                raise
            return str(found.experiment_id)

    def find_run(self, experiment_id: str, instance: str) -> Any:
        """The MLflow run logging the xdoe instance ``instance``, or ``None``."""
        runs = self.client().search_runs([experiment_id], filter_string=f"tags.`xdoe.instance` = '{instance}'",
                                         max_results=1)
        return runs[0] if runs else None

    def held(self, info: TrackedRun) -> str | None:
        found = self.find_run(self.experiment_id(info.experiment_name), info.instance)
        if found is None:
            return None
        status = found.data.tags.get(STATUS_TAG, "")
        return status if status in ENDED_STATUSES else ""

    def open_run(self, info: TrackedRun, *, replace: bool = False) -> bool:
        from mlflow.entities import Param

        client = self.client()
        experiment_id = self.experiment_id(info.experiment_name)
        found = self.find_run(experiment_id, info.instance)
        if found is not None and not replace:
            return False
        run = client.create_run(experiment_id, run_name=info.run, tags=run_tags(info))
        self.run_id = run.info.run_id
        if found is not None:
            self._retire(found, self.run_id)
        params = [Param(name, str(value)[:PARAM_CHARS]) for name, value in run_params(info).items()]
        for start in range(0, len(params), 100):  # MLflow takes 100 params per request
            client.log_batch(self.run_id, params=params[start:start + 100])
        self._sent = time.monotonic()
        return True

    def _retire(self, old: Any, new_id: str) -> None:
        """Delete the MLflow run ``old`` that ``new_id`` replaces (a resumed
        instance's copy, written anew; ``--overwrite``), ended first: a copy
        left RUNNING by a killed process ends KILLED (the attempt was
        stopped from outside, not failed by the run: as Ctrl-C's
        ``interrupted``), and it is tagged ``xdoe.replaced_by`` with
        ``new_id``. Deleted is MLflow's soft delete: the UI's "deleted"
        view shows it until ``mlflow gc``."""
        client, run_id = self.client(), old.info.run_id
        if old.info.status == "RUNNING":
            client.set_terminated(run_id, status="KILLED")
        client.set_tag(run_id, REPLACED_TAG, new_id)
        client.delete_run(run_id)

    def end_others(self, info: TrackedRun, ended: Mapping[str, str]) -> None:
        """Set the RUNNING MLflow runs of the instances in ``ended`` to
        their status (:data:`_STATUS`: a dead ``interrupted`` one KILLED, a
        ``failed`` one FAILED); one search of the experiment's RUNNING runs,
        none when ``ended`` is empty."""
        if not ended:
            return
        client = self.client()
        experiment_id = self.experiment_id(info.experiment_name)
        for found in client.search_runs([experiment_id], filter_string="attributes.status = 'RUNNING'",
                                        max_results=SEARCH_MAX):
            status = ended.get(found.data.tags.get("xdoe.instance", ""))
            if status is not None and found.data.tags.get("xdoe.run") == info.run:
                client.set_terminated(found.info.run_id, status=_STATUS.get(status, "FAILED"))

    def log_episode(self, episode: EpisodeLog) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        add = self._metrics.append
        for metric, value in (("reward", episode.reward), ("objective", episode.objective),
                              ("steps", episode.steps)):
            if value is not None:
                add(Metric(metric_tag(episode.phase, metric, episode.agent, episode.worker), float(value), now,
                           episode.episode))
        if episode.first_agent:
            add(Metric(env_step_tag(episode.phase, episode.worker), float(episode.env_step), now, episode.episode))
        if len(self._metrics) >= BATCH or time.monotonic() - self._sent >= FLUSH_SECS:
            self.flush()

    def flush(self) -> None:
        metrics, self._metrics = self._metrics, []
        self._sent = time.monotonic()
        for start in range(0, len(metrics), BATCH):
            self.client().log_batch(self.run_id, metrics=metrics[start:start + BATCH])

    def close_run(self, status: str) -> None:
        if self.run_id is None:
            return
        try:
            self.flush()
        finally:
            run_id, self.run_id = self.run_id, None
            if status != "running":  # an export of an instance still running: the MLflow run stays RUNNING
                self.client().set_terminated(run_id, status=_STATUS.get(status, "FAILED"))
            if status in ENDED_STATUSES:  # the copy is complete (held)
                self.client().set_tag(run_id, STATUS_TAG, status)
