"""Runs that did not finish (failed mid-run, interrupted, still running) are
left out of every response, and the analysis says which: their episodes stop
where the run stopped, so a score of them would be a score of the stop. A
known-truth study (synthetic.py) with one run failing at its third episode,
through xgen, the executor and the store."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from synthetic import EPISODES, document

from xdoe.analysis import analyze, load_scores, parse_response
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate
from xdoe.errors import InputError
from xdoe.results import LEFT_OUT_ATTR, load

FAILING = "synthetic-0003"  # design point 3, repetition 0


@pytest.fixture(scope="module")
def failed_campaign(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("unfinished") / "_outputs"
    generate(document(repetitions=2), out)
    path = out / f"run-{FAILING}.yaml"
    run = yaml.safe_load(path.read_text("utf-8"))
    (phase,) = run["schedule"][0].values()
    # the muscle fails at its third proposal: two of the run's one-step episodes are recorded
    phase["agents"][0]["muscle"] = {"name": "flaky:FlakyMuscle", "params": {"fail_at": 3}}
    path.write_text(yaml.safe_dump(run), "utf-8")
    # a run file edited after xgen is refused beside the manifest that records it (its levels would be
    # mislabelled); the design stays recorded in the store, which every reader below uses
    (out / "manifest.json").unlink()
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    done = CliRunner().invoke(xrun, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", url, "--results", str(out / "results")])
    assert done.exit_code == 1, done.output  # one run failed, its neighbours ran
    return {"dir": out, "store": url}


def test_the_failed_run_is_in_the_table_and_named_unfinished(failed_campaign) -> None:
    frame = load(failed_campaign["store"], "synthetic")
    assert frame.attrs[LEFT_OUT_ATTR] == {FAILING: "failed"}
    assert sorted(frame.loc[frame["run"] == FAILING, "episode"]) == [0, 1]  # stopped at its third episode
    assert frame.groupby("run").size().drop(FAILING).eq(EPISODES).all()


def test_the_analysis_leaves_the_failed_run_out_and_says_so(failed_campaign) -> None:
    frame = load(failed_campaign["store"], "synthetic")
    a = analyze(frame)
    assert a.runs == 15  # 8 points x 2 repetitions, one run failed
    point = next(p for p in a.points if p.index == 3)
    finished = frame[(frame["design_point"] == 3) & (frame["run"] != FAILING)]
    assert point.n == 1 and finished["run"].nunique() == 1
    assert point.estimate == pytest.approx(finished["objective"].mean(), rel=1e-12)  # one run: IQM = its mean
    (note,) = [w for w in a.warnings if "have not finished" in w]
    assert f"1 failed: {FAILING}" in note and "left out of the responses" in note
    # the database's scores answer the same
    scores = load_scores(failed_campaign["store"], parse_response(None), "synthetic")
    assert scores.attrs[LEFT_OUT_ATTR] == {FAILING: "failed"}
    b = analyze(scores)
    assert b.runs == 15 and [(p.index, p.n) for p in b.points] == [(p.index, p.n) for p in a.points]
    assert any("have not finished" in w for w in b.warnings)


def test_the_cli_says_so_and_json_carries_it(failed_campaign) -> None:
    out = CliRunner().invoke(xrun, ["analyze", str(failed_campaign["dir"]), "--format", "json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.stdout)
    assert body["runs"] == 15 and any(f"1 failed: {FAILING}" in w for w in body["warnings"])


def test_no_finished_run_is_a_clear_error(failed_campaign) -> None:
    frame = load(failed_campaign["store"], "synthetic")
    only = frame[frame["run"] == FAILING].copy()
    only.attrs = dict(frame.attrs)
    with pytest.raises(InputError, match="no run has finished .1 failed: synthetic-0003"):
        analyze(only)


def test_pruned_and_failed_runs_are_left_out_by_one_rule_and_named_in_one_note(failed_campaign) -> None:
    """The runs a response leaves out are the frame's ``LEFT_OUT_ATTR`` whatever their status: a pruned
    run and a failed one leave by the same rule and are named, by status, in one note; a pruned run is
    done, so the note asks to resume only when a run is not."""
    from xdoe.analysis import left_out_notes, run_table

    frame = load(failed_campaign["store"], "synthetic")
    pruned = "synthetic-0000"
    frame.attrs[LEFT_OUT_ATTR] = {**frame.attrs[LEFT_OUT_ATTR], pruned: "pruned"}
    table, _ = run_table(frame, parse_response(None))
    assert not {pruned, FAILING} & set(table["run"]) and len(table) == 14
    (note,) = left_out_notes(frame)
    assert note.startswith(f"2 run(s) are left out of the responses (1 failed: {FAILING}; 1 pruned: {pruned}; "
                           "pruned early by run_config.prune; the others have not finished)")
    assert "resumes those not done" in note
    assert [w for w in analyze(frame).warnings if "left out" in w] == [note]
    frame.attrs[LEFT_OUT_ATTR] = {pruned: "pruned"}
    (note,) = left_out_notes(frame)
    assert "(1 pruned: synthetic-0000; pruned early by run_config.prune)" in note and "resume" not in note
