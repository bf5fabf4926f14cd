"""The end-of-campaign summary of ``xrun experiment-start`` at 80 and 160
columns: uids and wall times never cut, factor levels folded (below the uid
when narrow, their own column when wide), levels shown as written."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from rich.console import Console
from ruamel.yaml import YAML

from xdoe.cli._summary import summary_table
from xdoe.cli._xrun import main
from xdoe.execution import PhaseResult, RunResult

UIDS = [f"cartpole-hyperparameter-study-{i:04d}" for i in range(3)]
LEVELS = {uid: f"0.agents=[learner], alpha=0.{i}5, epsilon=0.0421337, 1.simulation=vanilla, gamma=0.99"
          for i, uid in enumerate(UIDS)}
WALLS = ["1234.57 s", "617.28 s", "411.52 s"]


def _results() -> list[RunResult]:
    out = []
    for i, uid in enumerate(UIDS):
        means = {"learner": 123.456 * (i + 1), "opponent": -7.25}
        phases = [PhaseResult(0, "training", "train", 300), PhaseResult(1, "testing", "test", 20, 200, means, means)]
        out.append(RunResult(uid=uid, status=["finished", "failed", "skipped"][i], episodes=320, phases=phases,
                             wall_time=1234.5678 / (i + 1)))
    return out


def _render(width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(summary_table(_results(), ["cartpole-hyperparameter-study-0009"], LEVELS, width=width))
    return console.export_text().splitlines()


@pytest.mark.parametrize("width", [80, 160])
def test_nothing_is_cut_at_80_or_160_columns(width: int) -> None:
    lines = _render(width)
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    for uid, wall in zip(UIDS, WALLS):
        row = next(line for line in lines if uid in line)  # the uid whole, on its row's first line
        assert wall in row and "…" not in text
    assert "cartpole-hyperparameter-study-0009" in text
    # every level whole and as written ([learner] is not rich markup)
    for levels in LEVELS.values():
        for level in levels.split(", "):
            assert level in text, level
    assert "learner 123" in text and "learner 370" in text
    first = next(line for line in lines if UIDS[0] in line)
    if width == 160:  # wide: the levels have their own column, on the uid's line
        assert "alpha=0.05" in first and "factor levels" in text
    else:  # narrow: below the uid
        assert "alpha=0.05" not in first and "run / factor levels" in text


def test_experiment_start_at_80_columns(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    files = []
    for i in range(2):
        doc = {"uid": f"a-rather-long-experiment-name-{i:04d}", "experiment_uid": "a-rather-long-experiment-name",
               "seed": i, "design_point": {"index": i, "repetition": 0,
                                           "levels": {"0.agents": ["rnd"], "length": 3 + i, "name": "x" * 12}},
               "schedule": [{"training": {
                   "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "d",
                                                     "params": {"length": 3 + i, "sensors": 1, "actuators": 1}}}],
                   "agents": [{"name": "rnd", "brain": {"name": "xdoe.agents:DummyBrain"},
                               "muscle": {"name": "xdoe.agents:DummyMuscle"},
                               "objective": {"name": "xdoe.agents:RewardObjective"}}],
                   "simulation": {"name": "xdoe.simulation:VanillaSimController"},
                   "phase_config": {"mode": "test", "episodes": 2}}}]}
        path = tmp_path / f"run-{i}.yaml"
        with open(path, "w") as fh:
            YAML().dump(doc, fh)
        files.append(str(path))
    out = CliRunner().invoke(main, ["experiment-start", "--store", f"sqlite:///{tmp_path / 's.sqlite'}", *files])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in out.stdout
    for i in range(2):
        row = next(line for line in lines if f"a-rather-long-experiment-name-{i:04d}" in line)
        assert row.rstrip().endswith(" s") and "finished" in row
        below = lines[lines.index(row) + 1:lines.index(row) + 3]  # the levels, folded below the uid
        assert f"0.agents=rnd, length={3 + i}," in below[0] and f"name={'x' * 12}" in below[1]
