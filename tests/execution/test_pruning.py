"""Stopping poor runs early (issue 37 item 2): ``run_config: {prune: ...}``
decided by Optuna's own pruners on the store's rung rows.

A known-truth study (``prune_components``: 4 learning rates x 3 widths x 2
repetitions, the best setting 2 better than any other) runs through the real
``xrun experiment-start``: successive halving keeps the best setting, prunes
the worst and spends at most half the training steps of the unpruned grid;
the same store state gives the same decisions (twice with ``--jobs 1``);
``xrun status``, the summary and the analysis count the pruned runs; a
pruned run is done (not run again); a resumed run keeps its recorded
decisions; without Optuna the campaign refuses to start, naming the extra.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from prune_components import BEST, LRS, TRAIN_EPISODES, WIDTHS, LENGTH, generate, quality
from xdoe._extras import install_command

optuna = pytest.importorskip("optuna")

SHA = {"method": "successive_halving", "min_steps": 50, "reduction_factor": 3, "metric": "reward"}
HERE = Path(__file__).resolve().parent
#: tests/execution (prune_components) and tests (hold, which CurveEnvironment calls) for child processes
PATH = os.pathsep.join([str(HERE), str(HERE.parent), str(HERE.parents[1] / "src")])


def _start(folder: Path, url: str, *extra: str) -> Any:
    from xdoe.cli._xrun import main

    return CliRunner().invoke(main, ["experiment-start", str(folder), "--store", url, "--results",
                                     str(folder.parent / "results"), "--no-laydown", *extra])


def _campaign(tmp_path: Path, prune: dict[str, Any] | None, *extra: str, name: str = "c") -> dict[str, Any]:
    out = tmp_path / name / "_outputs"
    generate(out, prune)
    url = f"sqlite:///{tmp_path / name / 'xrun.sqlite'}"
    done = _start(out, url, *(extra or ("--in-process",)))
    assert done.exit_code == 0, done.output
    return {"dir": out, "store": url, "output": done.output, **_read(url)}


def _read(url: str) -> dict[str, Any]:
    from xdoe.store import Store

    with Store(url, read_only=True) as store, store.database.engine.connect() as conn:
        steps = conn.execute(sa.text("SELECT sum(e.steps) FROM episode e JOIN phase p ON p.id = e.phase_id "
                                     "WHERE p.name = 'training'")).scalar()
        statuses = dict(conn.execute(sa.text("SELECT r.uid, i.status FROM run r JOIN run_instance i "
                                             "ON i.run_id = r.id ORDER BY i.id")).all())
        rungs = [tuple(row) for row in conn.execute(sa.text(
            "SELECT r.uid, g.phase_index, g.rung, g.step, g.value, g.pruned, g.peers FROM rung g "
            "JOIN run_instance i ON i.id = g.instance_id JOIN run r ON r.id = i.run_id ORDER BY r.uid, g.rung"))]
        instances = conn.execute(sa.text("SELECT count(*) FROM run_instance")).scalar()
    return {"steps": int(steps), "statuses": statuses, "rungs": rungs, "instances": instances}


def _levels(uid: str) -> dict[str, float]:
    n = int(uid.rsplit("-", 1)[1]) % (len(LRS) * len(WIDTHS))  # xgen's numbering: lr slowest, width fastest
    return {"lr": LRS[n // len(WIDTHS)], "width": WIDTHS[n % len(WIDTHS)]}


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _campaign(tmp_path_factory.mktemp("grid"), None)


@pytest.fixture(scope="module")
def halving(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _campaign(tmp_path_factory.mktemp("halving"), SHA)


def test_successive_halving_keeps_the_best_prunes_the_worst_and_halves_the_steps(grid, halving) -> None:
    runs = len(LRS) * len(WIDTHS) * 2
    assert grid["steps"] == runs * TRAIN_EPISODES * LENGTH == 14_400
    assert set(grid["statuses"].values()) == {"finished"} and not grid["rungs"]
    statuses = halving["statuses"]
    assert len(statuses) == runs
    pruned = {uid for uid, s in statuses.items() if s == "pruned"}
    assert set(statuses.values()) == {"finished", "pruned"} and len(pruned) >= runs // 2
    best = [uid for uid in statuses if _levels(uid) == BEST]
    assert any(statuses[uid] == "finished" for uid in best)  # the best setting ran to the end
    worst = min(quality(**_levels(uid)) for uid in statuses)
    assert all(statuses[uid] == "pruned" for uid in statuses if quality(**_levels(uid)) == worst)
    # the steps: at most half of the unpruned grid's (measured: 4,650 of 14,400, 32 %)
    assert halving["steps"] <= 0.5 * grid["steps"], (halving["steps"], grid["steps"])
    # every pruned run kept every episode it ran: its training steps reach its last rung
    last = {uid: max(r[3] for r in halving["rungs"] if r[0] == uid) for uid in pruned}
    assert all(r[5] == (r[0] in pruned and r[3] == last[r[0]]) for r in halving["rungs"])
    # the rungs are successive halving's: 50, 150, 450 steps
    assert {r[3] for r in halving["rungs"]} <= {50, 150, 450}
    assert "24 run(s): " in halving["output"] and " pruned" in halving["output"]


def test_same_store_state_gives_the_same_decisions_with_jobs_1(tmp_path: Path, halving, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", PATH)
    first = _campaign(tmp_path, SHA, "--jobs", "1", name="a")
    second = _campaign(tmp_path, SHA, "--jobs", "1", name="b")
    assert first["rungs"] == second["rungs"] and first["statuses"] == second["statuses"]
    # and the same as in one process: the decisions depend on the store's rows, not on the backend
    assert first["rungs"] == halving["rungs"] and first["steps"] == halving["steps"]


def test_a_pruned_run_is_done_and_never_runs_again(tmp_path: Path) -> None:
    c = _campaign(tmp_path, SHA)
    again = _start(c["dir"], c["store"], "--in-process")
    assert again.exit_code == 0, again.output
    after = _read(c["store"])
    assert after["instances"] == c["instances"] and after["rungs"] == c["rungs"]


@pytest.mark.parametrize("prune", [
    {"method": "hyperband", "min_steps": 50, "max_steps": 600, "reduction_factor": 3, "metric": "reward"},
    {"method": "median", "min_steps": 100, "n_startup_trials": 3},
], ids=["hyperband", "median"])
def test_hyperband_and_the_median_rule_prune_and_keep_the_best(tmp_path: Path, grid, prune) -> None:
    c = _campaign(tmp_path, prune)
    statuses = c["statuses"]
    assert "pruned" in statuses.values()
    assert any(statuses[uid] == "finished" for uid in statuses if _levels(uid) == BEST)
    assert c["steps"] < 0.5 * grid["steps"]  # measured: Hyperband 6,350 and median 6,400 of 14,400


def test_status_and_analysis_count_the_pruned_runs(halving) -> None:
    from xdoe.analysis import analyze, run_table
    from xdoe.analysis import Response
    from xdoe.cli._xrun import main
    from xdoe.results import LEFT_OUT_ATTR, load

    pruned = sorted(uid for uid, s in halving["statuses"].items() if s == "pruned")
    shown = CliRunner().invoke(main, ["status", str(halving["dir"]), "--store", halving["store"], "--format", "json"])
    assert shown.exit_code == 0, shown.output  # every run is done: finished or pruned
    data = json.loads(shown.output)
    assert data["counts"]["pruned"] == len(pruned) and data["counts"]["finished"] == 24 - len(pruned)
    assert sorted(r["run"] for r in data["runs"] if r["status"] == "pruned") == pruned
    assert all("pruned at rung" in r["reason"] for r in data["runs"] if r["status"] == "pruned")
    frame = load(halving["store"])
    # one rule: the runs whose chosen instance did not finish, by status; their episodes are kept
    assert frame.attrs[LEFT_OUT_ATTR] == {uid: "pruned" for uid in pruned} and set(pruned) <= set(frame["run"])
    table, _ = run_table(frame, Response("training", "reward"))  # even on the phase they ran: left out
    assert not set(table["run"]) & set(pruned) and len(table) == 24 - len(pruned)
    a = analyze(frame)
    assert a.runs == 24 - len(pruned)
    (note,) = [w for w in a.warnings if "left out of the responses" in w]  # one note names them by status
    assert f"{len(pruned)} run(s) are left out" in note and f"({len(pruned)} pruned: " in note
    assert "pruned early by run_config.prune" in note and "balance is broken" in note and "resumes" not in note
    assert a.points[0].levels == {"lr": 0.01, "width": 64}
    results = CliRunner().invoke(main, ["results", str(halving["dir"]), "--store", halving["store"]])
    assert results.exit_code == 0 and f"({len(pruned)} pruned: " in results.output + results.stderr


def _fake_plan(tmp_path: Path, prune: dict[str, Any]) -> Any:
    from xdoe.execution import load_plan

    doc = {"uid": "solo-0003", "experiment_uid": "solo", "seed": 1, "run_config": {"prune": prune},
           "schedule": [{"training": {
               "environments": [{"environment": {"name": "prune_components:CurveEnvironment", "uid": "c"}}],
               "agents": [{"name": "random", "brain": {"name": "xdoe.agents:DummyBrain"},
                           "muscle": {"name": "xdoe.agents:DummyMuscle"},
                           "objective": {"name": "xdoe.agents:RewardObjective"}}],
               "simulation": {"name": "xdoe.simulation:VanillaSimController"},
               "phase_config": {"mode": "train", "episodes": 10}}}]}
    return load_plan(doc)


def test_a_resumed_run_takes_the_decisions_it_recorded(tmp_path: Path, store) -> None:
    from xdoe.conditions import EpisodeProgress, PhaseProgress
    from xdoe.errors import RunPruned
    from xdoe.execution._hooks import EpisodeEnd
    from xdoe.execution._pruning import PruneTracker
    from xdoe.store import RungRow

    plan = _fake_plan(tmp_path, SHA)
    with store.recorder(plan.document, results_root=tmp_path / "res") as rec:
        rec.phase_started(0, "training", "train", {})
        store.rungs.record_rung(rec.instance_id, 0, RungRow(0, 50, 1.5, True, 7))  # decided before a kill
        tracker = PruneTracker(plan, plan.phases[0], rec)
        progress = PhaseProgress(0, "training", "train", 1, 10, ["random"])
        for e in range(4):  # 40 steps: below the first rung
            progress.steps = 10 * (e + 1)
            tracker.on_episode_end(EpisodeEnd(0, e + 1, EpisodeProgress(progress, 0, e, 10, {"random": 9.0},
                                                                        {"random": 9.0}), False, 1, None))
        progress.steps = 50
        with pytest.raises(RunPruned, match="against 7 other run"):  # the recorded decision, no peer asked
            tracker.on_episode_end(EpisodeEnd(0, 5, EpisodeProgress(progress, 0, 4, 10, {"random": 9.0},
                                                                    {"random": 9.0}), False, 1, None))
        rec.phase_finished("pruned")


def _live(method: str, values: list[list[float]]) -> list[int | None]:
    """Optuna alone, trials one after the other: the rung each is pruned at."""
    from xdoe.execution._pruning import _pruner
    from xdoe.documents import PruneSpec

    spec = PruneSpec(method=method, min_steps=1, reduction_factor=3, max_steps=27)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="xdoe-prune", direction="maximize", pruner=_pruner(optuna, spec))
    out: list[int | None] = []
    for row in values:
        trial = study.ask()
        at = None
        for r, v in enumerate(row):
            trial.report(v, spec.rung_step(r))
            if trial.should_prune():
                at = r
                break
        study.tell(trial, state=optuna.trial.TrialState.PRUNED) if at is not None else study.tell(trial, row[-1])
        out.append(at)
    return out


@pytest.mark.parametrize("method", ["successive_halving", "hyperband"])
def test_the_decisions_are_optunas_own(method: str) -> None:
    """Rebuilt from recorded values alone, each decision is the one Optuna's
    pruner takes in a live study where the trials ran one after the other."""
    from xdoe.documents import PruneSpec
    from xdoe.execution._pruning import prune_decision

    rng = random.Random(5)
    values = [[rng.gauss(q, 1.0) for _ in range(4)] for q in (rng.uniform(0, 5) for _ in range(30))]
    live = _live(method, values)
    assert any(at is not None for at in live) and any(at is None for at in live)
    spec = PruneSpec(method=method, min_steps=1, reduction_factor=3, max_steps=27)
    ours: list[int | None] = []
    for k, row in enumerate(values):
        at = None
        for r in range(4):
            peers = [(j, f"x-{j}", {rr: values[j][rr] for rr in range(r + 1)}, ours[j] == r)
                     for j in range(k) if ours[j] is None or ours[j] >= r]
            if prune_decision(spec, r, {rr: row[rr] for rr in range(r + 1)}, k, peers, f"x-{k}"):
                at = r
                break
        ours.append(at)
    assert ours == live


def test_without_optuna_the_campaign_refuses_to_start_naming_the_extra(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "_outputs"
    generate(out, SHA)
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    done = _start(out, url, "--in-process")
    assert done.exit_code == 2
    assert "run_config.prune needs the 'optuna' extra" in done.output and install_command("optuna") in done.output
    assert not (tmp_path / "xrun.sqlite").exists()  # nothing written


def test_the_rule_is_checked_and_absent_leaves_the_document_as_it_was(tmp_path: Path) -> None:
    from xdoe.errors import DocumentError
    from xdoe.execution import load_plan

    with pytest.raises(DocumentError, match="hyperband needs max_steps"):
        _fake_plan(tmp_path, {"method": "hyperband", "min_steps": 10})
    with pytest.raises(DocumentError, match="min_steps"):
        _fake_plan(tmp_path, {"method": "median"})
    plan = _fake_plan(tmp_path, {"method": "median", "min_steps": 10})
    assert plan.document["run_config"] == {"prune": {"method": "median", "min_steps": 10}}  # as written
    doc = dict(plan.document)
    doc.pop("run_config")
    assert "run_config" not in load_plan(doc).document or not load_plan(doc).document["run_config"]


def test_a_campaign_killed_and_restarted_makes_the_same_decisions(tmp_path: Path, halving) -> None:
    """SIGKILL ``xrun`` in the middle of the pruned campaign, start it again:
    the finished and pruned runs are skipped, the killed run resumes with the
    decisions it recorded, and every rung row (value, decision, peers seen)
    is the uninterrupted campaign's. The kill comes where :mod:`hold` holds
    the campaign (an episode start of ``CurveEnvironment``), half its
    training episodes in, in a run with episodes stored: no race with it."""
    import signal
    import subprocess

    import hold

    out = tmp_path / "_outputs"
    generate(out, SHA)
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    env = {**os.environ, "PYTHONPATH": PATH}
    command = [sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "experiment-start", str(out),
               "--in-process", "--store", url, "--results", str(tmp_path / "results"), "--no-laydown", "-q"]
    hold.request(tmp_path / "hold", halving["steps"] // LENGTH // 2, least=5)
    proc = subprocess.Popen(command, env={**env, hold.HOLD: str(tmp_path / "hold")}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert hold.wait_held(proc, tmp_path / "hold"), f"the campaign ended before its hold: {proc.communicate()}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = _read(url)
    assert 12 <= len(killed["rungs"]) < len(halving["rungs"])  # a dozen rungs decided, not all
    assert list(killed["statuses"].values()).count("running") == 1  # killed in the middle of a run: it resumes
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = _read(url)
    assert after["rungs"] == halving["rungs"]
    assert after["statuses"] == halving["statuses"] and after["steps"] == halving["steps"]


def test_the_dashboard_counts_the_pruned_runs(halving) -> None:
    import re

    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from xdoe.dashboard import Settings, create_app

    root = halving["dir"].parent
    settings = Settings(store_url=halving["store"], workdir=root, runs_dir=Path("_outputs"))
    base = f"http://127.0.0.1:{settings.port}"
    pruned = sum(1 for s in halving["statuses"].values() if s == "pruned")
    with TestClient(create_app(settings), base_url=base) as c:
        c.headers.update({"X-Xdoe-Token": settings.token, "Origin": base})
        table = c.get("/fragments/campaigns").text
        row = table.split('data-experiment="curves"', 1)[1].split("</tr>", 1)[0]
        count = {s: int(re.search(rf'class="count {s}[^"]*">(\d+)<', row).group(1)) for s in ("finished", "pruned")}
        assert count == {"finished": 24 - pruned, "pruned": pruned}
        assert 'title="100 % done (finished or pruned)"' in row
        runs = c.get("/fragments/campaigns/curves/runs?status=pruned").text
        assert runs.count('data-status="pruned"') == pruned


def test_with_two_jobs_each_decision_saw_at_most_the_rungs_recorded_before_it(tmp_path: Path, grid,
                                                                            monkeypatch) -> None:
    """``--jobs 2``: asynchronous successive halving. Which peers a decision
    sees depends on timing, but each saw only rows recorded before its own,
    and the campaign still prunes and keeps within half the steps."""
    monkeypatch.setenv("PYTHONPATH", PATH)
    c = _campaign(tmp_path, SHA, "--jobs", "2")
    from xdoe.store import Store

    with Store(c["store"], read_only=True) as store, store.database.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT g.id, r.uid, g.rung, g.peers FROM rung g JOIN run_instance i "
                                    "ON i.id = g.instance_id JOIN run r ON r.id = i.run_id")).all()
    for rid, uid, rung, peers in rows:
        assert peers <= sum(1 for o in rows if o[2] == rung and o[1] != uid and o[0] < rid)
    assert set(c["statuses"].values()) == {"finished", "pruned"}
    assert c["steps"] <= 0.5 * grid["steps"]
