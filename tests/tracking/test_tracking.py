"""Runs logged to TensorBoard and MLflow (issue 36.2): a real Taxi campaign
run with ``--log``, read back by TensorBoard's own ``EventAccumulator`` and
MLflow's own client, every episode equal to the store's; the same from
``xrun export --to``; a logging failure is one warning, never a failed run."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("tensorboard", reason="the 'tensorboard' extra is not installed")
pytest.importorskip("mlflow", reason="the 'mlflow' extra is not installed")

from xdoe.cli._xrun import main  # noqa: E402

EXPERIMENT = "taxi-tracking"
# two learning rates of a Q-learner on Taxi, one repetition: 2 runs; the test phase has 2 workers
TAXI = """\
uid: taxi-tracking
seed: 7
repetitions: 1
design: full_factorial
factors:
  alpha: {levels: [0.5, 0.9]}
definitions:
  environments:
    taxi: {environment: {name: xdoe.environments:GymnasiumEnvironment, uid: taxi,
                         params: {env_id: Taxi-v4, max_episode_steps: 25}}}
  agents:
    learner:
      name: learner
      brain: {name: xdoe.agents:QLearningBrain, params: {alpha: "${alpha}", gamma: 0.95}}
      muscle: {name: xdoe.agents:QLearningMuscle, params: {epsilon: 0.1}}
      objective: {name: xdoe.agents:RewardObjective, params: {}}
  sensors: {all: {taxi: [observation]}}
  actuators: {all: {taxi: [action]}}
  simulation:
    vanilla: {name: xdoe.simulation:VanillaSimController,
              conditions: [{name: xdoe.conditions:EnvironmentTerminationCondition, params: {}}]}
  phase_config:
    train: {mode: train, worker: 1, episodes: 12}
    test: {mode: test, worker: 2, episodes: 3}
schedule:
  - training:
      environments: [[taxi]]
      agents: [[learner]]
      sensors: {learner: [all]}
      actuators: {learner: [all]}
      simulation: [vanilla]
      phase_config: [train]
  - testing:
      phase_config: [test]
"""


def _xrun(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    return result


def _store(url: str) -> Any:
    from xdoe.store import Store

    return Store(url, create=False)


def _expected(url: str) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """run uid -> tag -> [(step, value)] as the store holds the episodes."""
    from xdoe.tracking import env_step_tag, metric_tag

    with _store(url) as store:
        table = store.views.episode_table(EXPERIMENT)
    col = {name: i for i, name in enumerate(table.columns)}
    out: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    env_steps: dict[tuple[str, int], int] = defaultdict(int)
    for row in table.rows:
        run, phase, worker, episode, agent = (row[col[k]] for k in ("run", "phase", "worker", "episode", "agent"))
        for metric in ("reward", "objective", "steps"):
            out[run][metric_tag(phase, metric, agent, worker)].append((episode, float(row[col[metric]])))
        env_steps[run, worker] += row[col["steps"]]  # one agent: one row per worker and episode
        out[run][env_step_tag(phase, worker)].append((episode, float(env_steps[run, worker])))
    return {run: {tag: sorted(points) for tag, points in tags.items()} for run, tags in out.items()}


def _levels(url: str) -> dict[str, dict[str, Any]]:
    with _store(url) as store:
        return {p.run: p.levels for p in store.views.selected_phases(EXPERIMENT)}


def _tensorboard(root: Path) -> dict[str, tuple[dict[str, list[tuple[int, float]]], dict[str, Any], str]]:
    """run folder name -> (tag -> [(step, value)], hparams, session end status), read by TensorBoard."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2

    out = {}
    for folder in sorted((root / EXPERIMENT).iterdir()):
        acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        acc.Reload()
        scalars = {tag: sorted((e.step, e.value) for e in acc.Scalars(tag)) for tag in acc.Tags()["scalars"]}
        content = acc.PluginTagToContent("hparams")
        start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
        end = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"])
        hparams = {k: v.number_value if v.HasField("number_value") else v.string_value
                   for k, v in start.session_start_info.hparams.items()}
        out[folder.name] = (scalars, hparams, api_pb2.Status.Name(end.session_end_info.status))
    return out


def _mlflow(uri: str) -> dict[str, tuple[dict[str, list[tuple[int, float]]], dict[str, str], dict[str, str], str]]:
    """run uid -> (key -> [(step, value)], params, tags, status), read by MLflow's client."""
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    out = {}
    for run in client.search_runs([experiment.experiment_id]):
        metrics = {key: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, key))
                   for key in run.data.metrics}
        out[run.info.run_name] = (metrics, run.data.params, run.data.tags, run.info.status)
    return out


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from xdoe.design.runfiles import generate

    root = tmp_path_factory.mktemp("tracking")
    (root / "taxi.yaml").write_text(TAXI, "utf-8")
    generate(root / "taxi.yaml", root / "out")
    url = f"sqlite:///{root / 'xrun.sqlite'}"
    tb, ml = root / "tb", f"file://{root / 'mlruns'}"
    # two run processes at once (--jobs 2), each opening its own trackers (one creates the MLflow experiment)
    result = _xrun("experiment-start", str(root / "out"), "--quiet", "--no-laydown", "--jobs", "2", "--store", url,
                   "--results", str(root / "results"), "--log", f"tensorboard:{tb}", "--log", f"mlflow:{ml}")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    return {"root": root, "url": url, "tb": tb, "mlflow": ml}


def _check_tensorboard(root: Path, url: str) -> None:
    expected, levels = _expected(url), _levels(url)
    assert len(expected) == 2
    got = _tensorboard(root)
    assert sorted(got) == sorted(expected)  # one folder per run, named by its uid
    for run, (scalars, hparams, status) in got.items():
        assert set(scalars) == set(expected[run])
        assert "testing/reward/learner.worker1" in scalars and "training/env_step" in scalars
        for tag, points in expected[run].items():
            assert [s for s, _ in scalars[tag]] == [s for s, _ in points], tag  # every episode, once
            assert [v for _, v in scalars[tag]] == pytest.approx([v for _, v in points], rel=1e-6), tag
        assert hparams["alpha"] == levels[run]["alpha"]
        assert "xdoe.seed" in hparams and hparams["xdoe.repetition"] == 0
        assert status == "STATUS_SUCCESS"
    assert len(expected[next(iter(expected))]["training/reward/learner"]) == 12


def _check_mlflow(uri: str, url: str) -> None:
    expected, levels = _expected(url), _levels(url)
    got = _mlflow(uri)
    assert sorted(got) == sorted(expected)  # one MLflow run per run, named by its uid
    with _store(url) as store:
        uuids = {run: store.runs.instances(run_uid=run)[-1].uuid for run in expected}
    for run, (metrics, params, tags, status) in got.items():
        assert set(metrics) == set(expected[run])
        for key, points in expected[run].items():
            assert metrics[key] == points, key  # exact: MLflow keeps the float
        assert params == {"alpha": str(levels[run]["alpha"])}
        assert tags["xdoe.run"] == run and tags["xdoe.instance"] == uuids[run]
        assert tags["xdoe.repetition"] == "0" and tags["xdoe.design_point"] in ("0", "1") and "xdoe.seed" in tags
        assert status == "FINISHED"


def test_live_logging_to_tensorboard_has_every_episode_and_the_levels(campaign: dict[str, Any]) -> None:
    _check_tensorboard(campaign["tb"], campaign["url"])


def test_live_logging_to_mlflow_has_every_episode_and_the_levels(campaign: dict[str, Any]) -> None:
    _check_mlflow(campaign["mlflow"], campaign["url"])


def test_export_to_writes_the_same_and_keeps_what_is_there(campaign: dict[str, Any]) -> None:
    root, url = campaign["root"], campaign["url"]
    tb, ml = root / "tb-export", f"file://{root / 'mlruns-export'}"
    for target in (f"tensorboard:{tb}", f"mlflow:{ml}"):
        result = _xrun("export", "--store", url, "--to", target)
        assert result.exit_code == 0, result.output
        assert f"wrote 2 runs (" in result.output and target in result.output
    _check_tensorboard(tb, url)
    _check_mlflow(ml, url)
    again = _xrun("export", "--store", url, "--to", f"mlflow:{ml}")
    assert again.exit_code == 0 and "wrote 0 runs" in again.output and "kept 2" in again.output, again.output
    # the live runs are the same instances: an export into the live destination keeps them
    live = _xrun("export", "--store", url, "--to", f"tensorboard:{campaign['tb']}")
    assert "wrote 0 runs" in live.output and "kept 2" in live.output, live.output
    over = _xrun("export", "--store", url, "--to", f"tensorboard:{tb}", "--overwrite")
    assert over.exit_code == 0 and "wrote 2 runs" in over.output, over.output
    _check_tensorboard(tb, url)
    assert _xrun("export", "--store", url, "--to", f"mlflow:{ml}", "--overwrite").exit_code == 0
    _check_mlflow(ml, url)  # the replaced runs are deleted: one run per run uid
    every = _xrun("export", "--store", url, "--all", "--to", f"tensorboard:{root / 'tb-all'}")
    assert every.exit_code == 0 and "wrote 2 runs" in every.output and "every experiment" in every.output
    _check_tensorboard(root / "tb-all", url)


def test_export_takes_a_table_or_a_tracker(campaign: dict[str, Any], tmp_path: Path) -> None:
    url = campaign["url"]
    both = _xrun("export", "--store", url, "-o", str(tmp_path / "x.csv"), "--to", f"tensorboard:{tmp_path}")
    neither = _xrun("export", "--store", url)
    bad = _xrun("export", "--store", url, "--to", "wandb:project")
    for result in (both, neither, bad):
        assert result.exit_code == 2, result.output
    assert "expected tensorboard:DIR or mlflow:URI" in bad.output


def test_a_logging_failure_warns_once_and_the_run_finishes(tmp_path: Path) -> None:
    from xdoe.design.runfiles import generate

    (tmp_path / "taxi.yaml").write_text(TAXI, "utf-8")
    generate(tmp_path / "taxi.yaml", tmp_path / "out")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log folder would be\n", "utf-8")
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    run_file = sorted((tmp_path / "out").glob("run-*.yaml"))[0]
    result = _xrun("experiment-start", str(run_file), "--no-laydown", "--store", url, "--results",
                   str(tmp_path / "results"), "--log", f"tensorboard:{blocker}")
    assert result.exit_code == 0, result.output
    assert result.output.count(f"logging to tensorboard:{blocker} failed") == 1, result.output
    with _store(url) as store:
        (instance,) = store.runs.instances()
        assert instance.status == "finished"
        assert len(store.views.episode_table(EXPERIMENT).rows) == 12 + 2 * 3
        status = store.views.campaign_status(None, EXPERIMENT)
    warnings = [w for r in status.runs for w in (r.warnings or [])]
    assert len(warnings) == 1 and f"logging to tensorboard:{blocker} failed" in warnings[0]


def test_a_bad_log_target_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "taxi.yaml").write_text(TAXI, "utf-8")
    from xdoe.design.runfiles import generate

    generate(tmp_path / "taxi.yaml", tmp_path / "out")
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    result = _xrun("experiment-start", str(tmp_path / "out"), "--store", url, "--log", "tensorboard")
    assert result.exit_code == 2 and "expected tensorboard:DIR or mlflow:URI" in result.output, result.output
    assert not (tmp_path / "xrun.sqlite").exists()


def test_run_config_log_logs_the_run(tmp_path: Path) -> None:
    from xdoe.execution import run
    from xdoe.tracking import TrackedRun  # noqa: F401 - the public names import

    tb = tmp_path / "tb"
    document = {
        "uid": "one", "experiment_uid": EXPERIMENT, "seed": 3,
        "run_config": {"log": [f"tensorboard:{tb}"]},
        "design_point": {"index": 0, "repetition": 0, "levels": {"length": 4}},
        "schedule": [{"testing": {
            "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
                                              "params": {"length": 4}}}],
            "agents": [{"name": "random", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "test", "episodes": 3}}}],
    }
    result = run(document, store=f"sqlite:///{tmp_path / 's.sqlite'}", results=tmp_path / "r")
    assert result.ok and not result.warnings, result
    ((scalars, hparams, status),) = _tensorboard(tb).values()
    assert [s for s, _ in scalars["testing/reward/random"]] == [0, 1, 2]
    assert scalars["testing/env_step"][-1][1] == 12  # 3 episodes of 4 steps
    assert hparams["length"] == 4 and status == "STATUS_SUCCESS"


def test_a_bad_run_config_log_is_an_error_at_its_line(tmp_path: Path) -> None:
    from xdoe.cli._xgen import main as xgen

    good = TAXI.replace("  phase_config:\n    train:",
                        "  run_config: {log: tensorboard:tb}\n  phase_config:\n    train:")
    (tmp_path / "good.yaml").write_text(good, "utf-8")
    ok = CliRunner().invoke(xgen, ["check", "--strict", str(tmp_path / "good.yaml")])
    assert ok.exit_code == 0, ok.output
    bad = good.replace("log: tensorboard:tb", "log: [wandb:project]")
    (tmp_path / "bad.yaml").write_text(bad, "utf-8")
    result = CliRunner().invoke(xgen, ["check", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2, result.output
    line = bad.splitlines().index("  run_config: {log: [wandb:project]}") + 1
    assert f"bad.yaml:{line}: definitions.run_config.log: log target 'wandb:project'" in result.output
    assert "expected tensorboard:DIR or mlflow:URI" in result.output
