"""A two-player game (experiments/tictactoe.yaml, shortened): the players'
rewards cancel, so their average is 0 whatever happens. The analysis answers
per agent, and the learner's win rate before and after training comes
straight out of ``xrun results``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.analysis import analyze, parse_response, read_design, response_agents, run_table
from xdoe.cli._xrun import main as xrun
from xdoe.errors import InputError
from xdoe.results import load

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from xdoe.design.runfiles import generate
    from xdoe.execution import run
    from xdoe.store import Store

    folder = tmp_path_factory.mktemp("game")
    text = (ROOT / "experiments" / "tictactoe.yaml").read_text("utf-8")
    text = text.replace("episodes: 3000", "episodes: 400").replace("episodes: 200", "episodes: 60")
    doc = folder / "tictactoe.yaml"
    doc.write_text(text, "utf-8")
    out = folder / "_outputs"
    generate(doc, out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    with Store(url) as store:
        for path in sorted(out.glob("run-*.yaml")):
            assert run(path, store=store, results=out / "results").ok
    return {"dir": out, "store": url, "frame": load(url, "tictactoe")}


def test_agents_are_never_averaged(game) -> None:
    frame = game["frame"]
    response = parse_response(None)
    assert response_agents(frame, response) == ["learner", "random"]
    with pytest.raises(InputError, match="several agents .*--agent"):
        run_table(frame, response)
    learner, _ = run_table(frame, response, "learner")
    rows = frame[(frame["phase"] == "testing") & (frame["agent"] == "learner")]
    assert learner["y"].tolist() == pytest.approx(rows.groupby("run")["objective"].mean().tolist())
    with pytest.raises(InputError, match="no such agent"):
        run_table(frame, response, "nobody")


def test_win_rate_before_and_after_training(game) -> None:
    frame = game["frame"]
    for phase in ("pretest", "testing"):
        table, _ = run_table(frame, parse_response(f"{phase}:objective>0"), "learner")
        rows = frame[(frame["phase"] == phase) & (frame["agent"] == "learner")]
        wins = (rows["objective"] > 0).groupby(rows["run"]).mean()
        assert table.set_index("run")["y"].to_dict() == pytest.approx(wins.to_dict())
        assert ((table["y"] >= 0) & (table["y"] <= 1)).all()
    runner = CliRunner()
    out = runner.invoke(xrun, ["results", str(game["dir"]), "--agent", "learner", "-r", "testing:objective>0"])
    assert out.exit_code == 0, out.output
    assert "tictactoe · response testing:objective>0:mean · agent learner" in out.output
    assert "best for learner: design point" in out.output


def test_cli_answers_each_agent_in_turn(game) -> None:
    runner = CliRunner()
    out = runner.invoke(xrun, ["results", str(game["dir"])])
    assert out.exit_code == 0, out.output
    assert "agent learner" in out.output and "agent random" in out.output
    out = runner.invoke(xrun, ["analyze", str(game["dir"]), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data["agents"]) == {"learner", "random"} and data["experiment"] == "tictactoe"
    a = analyze(game["frame"], agent="random")
    assert data["agents"]["random"]["best"]["estimate"] == pytest.approx(a.best.estimate)


def test_one_agent_asked_for_is_one_analysis_in_every_format(game) -> None:
    """``--agent NAME``: one analysis, so the JSON is that analysis (``Analysis.to_dict()``, its ``agent``
    naming it), as the table and CSV show one analysis; ``{"agents": {...}}`` holds the several analyses
    of a game answered without ``--agent`` (it wrapped the one agent asked for in ``agents:`` too)."""
    runner = CliRunner()
    for agent in ("learner", "random"):
        done = runner.invoke(xrun, ["analyze", str(game["dir"]), "--agent", agent, "--format", "json"])
        assert done.exit_code == 0, done.output
        data = json.loads(done.stdout)
        assert "agents" not in data and data["agent"] == agent and data["experiment"] == "tictactoe"
        design = read_design(game["dir"], "tictactoe")  # as xrun analyze reads it: the manifest's
        assert data == json.loads(json.dumps(analyze(game["frame"], agent=agent, design=design).to_dict()))
        both = json.loads(runner.invoke(xrun, ["analyze", str(game["dir"]), "--format", "json"]).stdout)
        assert both["agents"][agent] == data  # the same analysis, keyed by agent when several are answered
        rows = runner.invoke(xrun, ["analyze", str(game["dir"]), "--agent", agent, "--format", "csv"]).stdout
        assert {row["agent"] for row in csv.DictReader(io.StringIO(rows))} == {agent}


def test_each_picture_draws_the_agent_asked_for(game, tmp_path: Path) -> None:
    """A picture draws one analysis: ``xrun plot effects|design --agent NAME`` draws that agent's, with the
    effect ``xrun analyze --agent NAME`` gives; without it the refusal names the option, which exists (it
    said "choose one with --agent NAME" of commands that had no --agent)."""
    import re

    for agent in ("learner", "random"):
        answer = json.loads(CliRunner().invoke(xrun, ["analyze", str(game["dir"]), "--agent", agent,
                                                      "--format", "json"]).stdout)
        svg = tmp_path / f"{agent}.svg"
        done = CliRunner().invoke(xrun, ["plot", "effects", str(game["dir"]), "--agent", agent, "-o", str(svg)])
        assert done.exit_code == 0, done.output
        text = " ".join(re.findall(r">([^<>]+)</text>", svg.read_text("utf-8")))
        assert "agent " + agent in text and f"{answer['runs']} runs" in text
        (factor,) = answer["factors"]
        assert f"{factor['name']}: effect {factor['effect']:+.3g}, " in text  # the two-level screening's sign
        done = CliRunner().invoke(xrun, ["plot", "design", str(game["dir"]), "--agent", agent,
                                         "-o", str(tmp_path / f"{agent}-design.png")])
        assert done.exit_code == 0, done.output
    for picture in ("effects", "design"):
        refused = CliRunner().invoke(xrun, ["plot", picture, str(game["dir"]), "-o", str(tmp_path / "x.png")])
        assert refused.exit_code == 2 and "choose one with --agent NAME" in refused.output
        assert "No such option" not in CliRunner().invoke(
            xrun, ["plot", picture, str(game["dir"]), "--agent", "nobody", "-o", str(tmp_path / "y.png")]).output


def test_plan_of_a_game_is_one_document(game) -> None:
    """``xrun plan`` without ``--agent`` plans per agent in one document: one
    JSON object keyed by agent (as ``xrun analyze`` answers a game), one CSV
    header; each agent's part equals ``--agent NAME``'s answer."""
    runner = CliRunner()
    common = ["plan", str(game["dir"]), "--trials", "100", "--cap", "50"]
    out = runner.invoke(xrun, [*common, "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)  # one object (two were printed back to back)
    assert data["experiment"] == "tictactoe" and set(data["agents"]) == {"learner", "random"}
    for agent in ("learner", "random"):
        alone = runner.invoke(xrun, [*common, "--agent", agent, "--format", "json"])
        assert alone.exit_code == 0, alone.output
        assert data["agents"][agent] == json.loads(alone.stdout)
        assert data["agents"][agent]["agent"] == agent
    out = runner.invoke(xrun, [*common, "--format", "csv"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert sum(line.startswith("experiment,") for line in lines) == 1  # one header
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["agent"] for r in rows} == {"learner", "random"}
