"""The Stable-Baselines3 / PettingZoo studies of experiments/ generate, and
every run document they produce imports and sets up (brains built,
environments started); a shortened tic-tac-toe study runs and learns."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("pettingzoo")
pytest.importorskip("pygame")

from xdoe.design.runfiles import generate  # noqa: E402
from xdoe.execution import check_document, run  # noqa: E402

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


@pytest.mark.parametrize("name, runs", [("cartpole", 12), ("tictactoe-pettingzoo", 2), ("rps-pettingzoo", 4)])
def test_study_generates_and_every_run_checks(name, runs, tmp_path):
    generation = generate(EXPERIMENTS / f"{name}.yaml", output=tmp_path / "out")
    files = sorted((tmp_path / "out").glob("run-*.yaml"))
    assert len(files) == runs
    seen = set()
    for f in files:
        lines = check_document(f)
        assert lines and all("agent(s)" in line for line in lines)
        seen.add(f.read_text().count("algorithm: DQN"))
    assert generation.design is not None


@pytest.mark.slow
def test_tictactoe_learner_beats_the_random_player_more_often_after_training(store, tmp_path):
    generate(EXPERIMENTS / "tictactoe-pettingzoo.yaml", output=tmp_path / "out")
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load((tmp_path / "out" / "run-tictactoe-pettingzoo-0000.yaml").read_text())
    schedule = doc["schedule"]
    schedule[0]["before"]["phase_config"]["episodes"] = 150
    schedule[1]["training"]["phase_config"]["episodes"] = 1200
    schedule[2]["after"]["phase_config"]["episodes"] = 150
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    wins: dict[str, list[float]] = {}
    for e in store.runs.episodes(doc["uid"]):
        if e["agent"] == "learner" and e["phase"] in ("before", "after"):
            wins.setdefault(e["phase"], []).append(e["reward"] == 1.0)
    before, after = (sum(wins[p]) / len(wins[p]) for p in ("before", "after"))
    assert after > before + 0.1, (before, after)
