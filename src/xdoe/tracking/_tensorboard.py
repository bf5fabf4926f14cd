"""TensorBoard: one log folder per run instance, ``DIR/<experiment>/<run
uid>``, written by TensorBoard's own event file writer (the ``tensorboard``
extra; the writer ``torch.utils.tensorboard`` wraps, without torch):
scalars per episode (step: the episode index), the factor levels,
repetition and seed as hyperparameters of the hparams plugin (a session
start at the open, a session end with the status at the close; no
experiment summary, so TensorBoard builds the table from every run's
session, whatever factors each has)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from xdoe.tracking._tracker import (ENDED_STATUSES, EpisodeLog, TrackedRun, Tracker, env_step_tag, metric_tag,
                                   run_params)

__all__ = ["TensorBoardTracker", "INSTANCE_FILE", "run_folder"]

#: the file in a run's log folder naming the instance logged there (its first line) and, once the
#: instance ended, ``ended <status>`` (second line: the folder holds the whole instance)
INSTANCE_FILE = "xdoe-instance.txt"
#: seconds between the writer's flushes to disk (TensorBoard shows a live run this late)
FLUSH_SECS = 5
#: events the writer may hold before the run waits for its thread to write them
QUEUE = 4096

# hparams session end statuses (tensorboard.plugins.hparams.api_pb2.Status; no "aborted")
_STATUS = {"finished": "STATUS_SUCCESS", "failed": "STATUS_FAILURE"}


def run_folder(root: Path, info: TrackedRun) -> tuple[Path, bool]:
    """The log folder of ``info``'s instance and whether it holds it already:
    ``root/<experiment>/<run uid>``, or ``<run uid>~<instance>`` when that
    folder holds another instance of the run (a rerun); uids as they name
    their results folders (:func:`xdoe.documents.uid_file_name`)."""
    from xdoe.documents import uid_file_name

    base = root / uid_file_name(info.experiment_name)
    run = uid_file_name(info.run)  # a uid outside [A-Za-z0-9._-]: a slug and a short hash, as its results folder
    for name in (run, f"{run}~{info.instance[:8]}", f"{run}~{info.instance}"):
        folder = base / name
        marker = folder / INSTANCE_FILE
        try:
            if marker.read_text("utf-8").split()[:1] == [info.instance]:
                return folder, True
        except FileNotFoundError:
            if not folder.exists() or not any(folder.iterdir()):
                return folder, False
    return base / f"{run}~{info.instance}", False


class TensorBoardTracker(Tracker):
    """Logs runs as TensorBoard event files below ``where`` (a folder)."""

    kind = "tensorboard"

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.folder: Path | None = None
        self._writer: Any = None

    def open_run(self, info: TrackedRun, *, replace: bool = False) -> bool:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        folder, there = run_folder(Path(self.where), info)
        if there:
            if not replace:
                return False
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / INSTANCE_FILE).write_text(info.instance + "\n", "utf-8")
        self.folder = folder
        # a deep queue: the run waits for the writer's thread only when it falls this far behind
        self._writer = EventFileWriter(str(folder), max_queue_size=QUEUE, flush_secs=FLUSH_SECS)
        params: dict[str, Any] = dict(run_params(info))
        for key, value in (("xdoe.repetition", info.repetition), ("xdoe.seed", info.seed)):
            if value is not None:
                params[key] = value
        self._write(_session_start(params), 0)
        return True

    def held(self, info: TrackedRun) -> str | None:
        folder, there = run_folder(Path(self.where), info)
        if not there:
            return None
        words = (folder / INSTANCE_FILE).read_text("utf-8").split()
        return words[2] if len(words) >= 3 and words[1] == "ended" and words[2] in ENDED_STATUSES else ""

    def log_episode(self, episode: EpisodeLog) -> None:
        """One event per episode and agent holding its scalars."""
        from tensorboard.compat.proto.summary_pb2 import Summary

        values = [Summary.Value(tag=metric_tag(episode.phase, metric, episode.agent, episode.worker),
                                simple_value=float(value))
                  for metric, value in (("reward", episode.reward), ("objective", episode.objective),
                                        ("steps", episode.steps)) if value is not None]
        if episode.first_agent:
            values.append(Summary.Value(tag=env_step_tag(episode.phase, episode.worker),
                                        simple_value=float(episode.env_step)))
        self._write(Summary(value=values), episode.episode)

    def _write(self, summary: Any, step: int) -> None:
        from tensorboard.compat.proto.event_pb2 import Event

        self._writer.add_event(Event(wall_time=time.time(), step=int(step), summary=summary))

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close_run(self, status: str) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            self._write(_session_end(status), 0)
        finally:
            self._writer = None
            writer.close()
        if status in ENDED_STATUSES and self.folder is not None:  # after the events are on disk
            marker = self.folder / INSTANCE_FILE
            marker.write_text(marker.read_text("utf-8").split()[0] + f"\nended {status}\n", "utf-8")


def _hparams_summary(tag: str, data: Any) -> Any:
    """A summary of the hparams plugin holding ``data`` (``HParamsPluginData``), as the plugin reads it."""
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.plugins.hparams import metadata

    return Summary(value=[Summary.Value(tag=tag, metadata=metadata.create_summary_metadata(data),
                                        tensor=metadata.NULL_TENSOR)])


def _session_start(params: dict[str, Any]) -> Any:
    """The hparams plugin's session start summary: ``params`` as hyperparameters."""
    from tensorboard.plugins.hparams import metadata, plugin_data_pb2

    start = plugin_data_pb2.SessionStartInfo(start_time_secs=time.time())
    for name, value in params.items():
        if isinstance(value, bool):
            start.hparams[name].bool_value = value
        elif isinstance(value, (int, float)):
            start.hparams[name].number_value = value
        else:
            start.hparams[name].string_value = str(value)
    data = plugin_data_pb2.HParamsPluginData(session_start_info=start, version=metadata.PLUGIN_DATA_VERSION)
    return _hparams_summary(metadata.SESSION_START_INFO_TAG, data)


def _session_end(status: str) -> Any:
    """The hparams plugin's session end summary with the run's status."""
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value(_STATUS.get(status, "STATUS_UNKNOWN")),
                                         end_time_secs=time.time())
    data = plugin_data_pb2.HParamsPluginData(session_end_info=end, version=metadata.PLUGIN_DATA_VERSION)
    return _hparams_summary(metadata.SESSION_END_INFO_TAG, data)
