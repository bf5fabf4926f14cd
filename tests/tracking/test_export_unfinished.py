"""``xrun export --to`` of a run still running writes what the store holds so
far; exported again once the run has ended, the destination gets the whole
run (it kept the partial copy: the episodes recorded after the first export
never reached TensorBoard or MLflow, silently), and a third export keeps it.
The run is recorded through the store's own recorder, as the executor does."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("tensorboard", reason="the 'tensorboard' extra is not installed")
pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dashboard"))

from dashboard_helpers import taxi_run  # noqa: E402

from xdoe.cli._xrun import main as xrun  # noqa: E402


def _tensorboard(folder: Path) -> tuple[list[int], str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    acc.Reload()
    steps = [e.step for e in acc.Scalars("training/reward/learner")]
    end = acc.PluginTagToContent("hparams").get("_hparams_/session_end_info")
    status = ("none" if end is None else
              api_pb2.Status.Name(plugin_data_pb2.HParamsPluginData.FromString(end).session_end_info.status))
    return steps, status


def _mlflow(uri: str) -> tuple[list[int], str, int]:
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("live").experiment_id])
    run = runs[0]
    steps = [m.step for m in client.get_metric_history(run.info.run_id, "training/reward/learner")]
    return sorted(steps), run.info.status, len(runs)


def _export(url: str, target: str) -> str:
    out = CliRunner().invoke(xrun, ["export", "--store", url, "-e", "live", "--to", target])
    assert out.exit_code == 0, out.output
    return out.output


def test_a_run_exported_while_running_is_written_whole_once_it_ended(tmp_path: Path) -> None:
    from xdoe.store import Store

    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    tb, ml = tmp_path / "tb", f"mlflow:file://{tmp_path / 'mlruns'}"
    with Store(url) as store:
        rec = store.recorder(taxi_run("live-0", "live", 10), results_root=tmp_path / "results")
        rec.start()
        rec.phase_started(0, "training", "train", {"worker": 1, "episodes": 10})

        def episodes(first: int, end: int) -> None:
            for e in range(first, end):
                rec.episode_finished(worker=0, episode=e, agent="learner", steps=30, reward=-1.0 - e,
                                     objective=-1.0 - e, wall_time=0.0)
            rec.flush()

        episodes(0, 6)
        assert "wrote 1 runs" in _export(url, f"tensorboard:{tb}") and "wrote 1 runs" in _export(url, ml)
        assert _tensorboard(tb / "live" / "live-0") == ([0, 1, 2, 3, 4, 5], "STATUS_UNKNOWN")
        assert _mlflow(ml[len("mlflow:"):]) == ([0, 1, 2, 3, 4, 5], "RUNNING", 1)  # not FAILED: it runs
        # still running: an export leaves the copy as it is (a live log may be writing it)
        assert "kept 1" in _export(url, f"tensorboard:{tb}") and "kept 1" in _export(url, ml)
        episodes(6, 10)
        rec.phase_finished("finished")
        rec.finish("finished")
    for target in (f"tensorboard:{tb}", ml):
        text = _export(url, target)
        assert "wrote 1 runs" in text and "10 episode rows" in text, text
    assert _tensorboard(tb / "live" / "live-0") == (list(range(10)), "STATUS_SUCCESS")
    assert _mlflow(ml[len("mlflow:"):]) == (list(range(10)), "FINISHED", 1)
    for target in (f"tensorboard:{tb}", ml):  # complete now: kept
        assert "wrote 0 runs" in _export(url, target) and "kept 1" in _export(url, target)
    assert sorted(p.name for p in (tb / "live").iterdir()) == ["live-0"]


def test_branches_are_exported_with_their_experiment(tmp_path: Path) -> None:
    """``xrun export -e EXP --include-branches --to``: a branch's document has no experiment of
    its own; its tracker run went to ``no-experiment``, apart from the runs it grew from."""
    from xdoe.execution import run

    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    assert run(taxi_run("grown-0", "grown", 20, test_episodes=2), store=url,
               results=tmp_path / "results").status == "finished"
    done = CliRunner().invoke(xrun, ["branch", "grown-0", "--set", "brain.params.alpha=x0.5", "--episodes", "5",
                                     "-o", str(tmp_path / "runs"), "--store", url,
                                     "--results", str(tmp_path / "results")])
    assert done.exit_code == 0, done.output
    tb = tmp_path / "tb"
    out = CliRunner().invoke(xrun, ["export", "--store", url, "-e", "grown", "--include-branches",
                                    "--to", f"tensorboard:{tb}"])
    assert out.exit_code == 0 and "wrote 2 runs" in out.output, out.output
    assert sorted(p.relative_to(tb).as_posix() for p in tb.glob("*/*")) == ["grown/grown-0", "grown/grown-0_b01"]
    ml = f"mlflow:file://{tmp_path / 'mlruns'}"
    assert "wrote 2 runs" in _export_branches(url, ml)
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=ml[len("mlflow:"):])
    assert client.get_experiment_by_name("no-experiment") is None
    runs = client.search_runs([client.get_experiment_by_name("grown").experiment_id])
    assert sorted(r.info.run_name for r in runs) == ["grown-0", "grown-0_b01"]


def _export_branches(url: str, target: str) -> str:
    out = CliRunner().invoke(xrun, ["export", "--store", url, "-e", "grown", "--include-branches", "--to", target])
    assert out.exit_code == 0, out.output
    return out.output
