"""xrun optimize (issue 37): the adaptive loop through the real executor.

* known truth: TPE gets within 0.25 of the quadratic's maximum in fewer runs
  than the grid that does (median over seeds);
* stopped and restarted (a trial cap, a batch asked and not written), the
  study ends with the same trials, runs and values as an uninterrupted one;
* every trial is an ordinary run: xrun analyze and xrun plot see them.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

import optuna_truth
from optimize_study import campaign, interrupted, optimize, points, same_files, trials
from optuna_truth import document
from xdoe.cli._xrun import main
from xdoe.design.runfiles import generate


def test_tpe_reaches_the_optimum_in_fewer_runs_than_the_grid(tmp_path: Path) -> None:
    tolerance = 0.25
    design = {"method": "optuna", "sampler": "tpe", "trials": 25, "batch": 5}
    needed = []
    for seed in (1, 2, 3):
        doc, out = campaign(tmp_path, document(design, seed=seed), name=f"seed{seed}")
        optimize(doc, out)
        values = [optuna_truth.truth(**p["natural"]) for p in points(out)]  # the true mean at each trial, in order
        assert len(values) == 25
        hits = [i for i, v in enumerate(values) if v >= optuna_truth.MAXIMUM - tolerance]
        needed.append(hits[0] + 1 if hits else 10**6)  # runs: one per trial
    grid = optuna_truth.grid_runs(tolerance)
    assert grid == 216
    assert statistics.median(needed) < grid, (needed, grid)
    assert statistics.median(needed) <= 25, needed  # 1, 17 and not within 25 trials (57 of 60)


def test_stopped_and_restarted_gives_the_trials_of_an_uninterrupted_study(tmp_path: Path) -> None:
    design = {"method": "optuna", "sampler": "tpe", "trials": 8, "batch": 2, "startup_trials": 3}
    doc, whole, parts = interrupted(tmp_path, document(design, repetitions=2))
    assert len(trials(parts)) == 5 and len(points(parts)) == 4  # one trial asked, not written
    optimize(doc, parts)
    assert trials(parts) == trials(whole)
    assert all(state == "COMPLETE" for _, state, _, _ in trials(whole)) and len(trials(whole)) == 8
    same_files(whole, parts, 16)
    # once more: nothing runs, nothing is told again
    journal = (parts / "optuna-quad.journal").read_bytes()
    optimize(doc, parts)
    assert (parts / "optuna-quad.journal").read_bytes() == journal


@pytest.mark.parametrize("sampler", ["tpe", "cmaes", "random"])
def test_a_driver_killed_inside_an_ask_continues_as_if_uninterrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       sampler: str) -> None:
    """The driver dies while the sampler suggests a trial's parameters (after
    its first, before its second; a SIGKILL between two of Optuna's journal
    writes): the study has no trial with part of its parameters, and the
    same command ends with the trials and run files of an uninterrupted study
    (before: the half trial was written as a point without x2 and every
    restart failed, exit 2)."""
    import optuna

    design = {"method": "optuna", "sampler": sampler, "trials": 6, "batch": 2, "startup_trials": 2}
    data = document(design, repetitions=2)
    doc, whole = campaign(tmp_path, data, name="whole")
    optimize(doc, whole)
    doc, parts = campaign(tmp_path, data, name="parts")
    optimize(doc, parts, "--max-trials", "3")  # trials 0..3 told, none asked beyond
    calls = []
    real = optuna.trial.Trial._suggest  # every suggest_* of a trial

    def dies_at_the_second_parameter(self, name, distribution):  # type: ignore[no-untyped-def]
        if self.number == 4:  # the first trial this command asks
            calls.append(name)
            if len(calls) == 2:
                raise SystemExit(137)  # the process ends here, as under SIGKILL
        return real(self, name, distribution)

    monkeypatch.setattr(optuna.trial.Trial, "_suggest", dies_at_the_second_parameter)
    CliRunner().invoke(main, ["optimize", str(doc), "-o", str(parts), "--in-process", "-q", "--no-laydown",
                              "--store", f"sqlite:///{parts / 'xrun.sqlite'}"])
    monkeypatch.undo()
    assert calls == ["x1", "x2"]
    assert all(len(params) == 3 for _, _, params, _ in trials(parts))  # no half trial
    optimize(doc, parts)
    assert trials(parts) == trials(whole)
    same_files(whole, parts, 12)


@pytest.mark.parametrize("sampler", ["cmaes", "gp", "random", "nsga2"])
def test_every_sampler_continues_a_stopped_study_as_if_uninterrupted(tmp_path: Path, sampler: str) -> None:
    """The other samplers (TPE: the test above) rebuilt from the journal after
    a stop give the trials of an uninterrupted study: their asks depend only
    on the seed and the trials told (``gp`` needs torch, ``cmaes`` the
    optuna extra's cmaes)."""
    if sampler == "gp":
        pytest.importorskip("torch")
    design = {"method": "optuna", "sampler": sampler, "trials": 8, "batch": 2, "startup_trials": 2}
    doc, whole, parts = interrupted(tmp_path, document(design))
    optimize(doc, parts)
    assert trials(parts) == trials(whole)
    assert [state for _, state, _, _ in trials(whole)] == ["COMPLETE"] * 8
    same_files(whole, parts, 8)


def test_a_trial_whose_run_fails_is_told_fail_and_the_study_goes_on(tmp_path: Path) -> None:
    """A setting whose runs raise (x1 > 4: ``optuna_truth.failing_truth``) is
    told ``FAIL``, as Optuna tells an objective that raises, and the study
    asks its other trials (before: the trial waited, and every restart ran
    the same failing run again, exit 1, never past it); the complete trials'
    values are their runs' means in the store, the best one of them."""
    import sqlite3

    design = {"method": "optuna", "sampler": "random", "trials": 8, "batch": 2}
    data = document(design, repetitions=2)
    data["definitions"]["environments"]["f"]["environment"]["params"]["function"] = "optuna_truth:failing_truth"
    doc, out = campaign(tmp_path, data)
    optimize(doc, out)
    told = trials(out)
    assert len(told) == 8
    failed = [n for n, _, params, _ in told if params["x1"] > optuna_truth.FAILS_ABOVE]
    assert failed and len(failed) < 8  # the seed gives both kinds
    assert all(state == ("FAIL" if n in failed else "COMPLETE") for n, state, _, _ in told)
    with sqlite3.connect(out / "xrun.sqlite") as db:  # the store's own numbers, not xdoe's readers
        rows = db.execute("select r.design_point, ri.status, avg(e.objective) from run r join run_instance ri on "
                          "ri.run_id = r.id left join phase p on p.instance_id = ri.id left join episode e on "
                          "e.phase_id = p.id group by ri.id").fetchall()
    assert sorted({point for point, status, _ in rows if status == "failed"}) == failed
    means: dict[int, list[float]] = {}
    for point, status, mean in rows:
        if status == "finished":
            means.setdefault(point, []).append(mean)
    for n, state, _, values in told:
        if state == "COMPLETE":
            assert values == pytest.approx([statistics.fmean(means[n])], rel=1e-12)  # iqm of 2 runs: their mean
    done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(out), "--in-process", "-q",
                                     "--store", f"sqlite:///{out / 'xrun.sqlite'}"])
    assert done.exit_code == 0, done.output  # nothing left to run: the failed runs are not run again
    best = max((v[0], n) for n, state, _, v in told if state == "COMPLETE")
    assert f"best trial {best[1]}:" in done.output


def test_the_analysis_leaves_out_a_trial_with_a_failed_run_as_the_study_does(tmp_path: Path) -> None:
    """Trial 0's second run fails, its first finishes: the study has it
    ``FAIL``, and ``xrun analyze`` leaves it out of the best trial, the
    history and the importances and says so (before: it was scored on the
    run that finished, a value the study never had)."""
    optuna_truth.FLAKY_CALLS.clear()
    design = {"method": "optuna", "sampler": "random", "trials": 4, "batch": 2}
    data = document(design, repetitions=2)
    data["definitions"]["environments"]["f"]["environment"]["params"]["function"] = "optuna_truth:flaky_truth"
    doc, out = campaign(tmp_path, data)
    optimize(doc, out)  # runs in file order: run 2 (trial 0, repetition 1) makes the 4th call
    assert [state for _, state, _, _ in trials(out)] == ["FAIL", "COMPLETE", "COMPLETE", "COMPLETE"]
    done = CliRunner().invoke(main, ["analyze", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    adaptive = json.loads(done.output[done.output.index("{"):done.output.rindex("}") + 1])["optuna"]
    assert adaptive["failed_trials"] == [0] and adaptive["trials"] == 3
    assert [h["trial"] for h in adaptive["history"]] == [1, 2, 3]
    told = {n: v[0] for n, state, _, v in trials(out) if state == "COMPLETE"}
    assert adaptive["best"]["trial"] == max(told, key=told.__getitem__)
    assert adaptive["best"]["value"] == pytest.approx(max(told.values()), rel=1e-12)
    text = CliRunner().invoke(main, ["analyze", str(out)]).output
    assert "3 complete trials told (and 1 failed, left out: trial(s) 0)" in text


def test_every_trial_is_an_ordinary_run(tmp_path: Path) -> None:
    design = {"method": "optuna", "sampler": "random", "trials": 6, "batch": 3}
    doc, out = campaign(tmp_path, document(design, repetitions=2))
    optimize(doc, out)
    runner = CliRunner()
    done = runner.invoke(main, ["analyze", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output[done.output.index("{"):done.output.rindex("}") + 1])
    adaptive = data["optuna"]
    assert adaptive["trials"] == 6 and adaptive["best"]["runs"] == 2
    values = {h["trial"]: h["value"] for h in adaptive["history"]}
    assert adaptive["best"]["value"] == max(values.values())
    assert set(adaptive["importances"]) == {"x1", "x2", "x3"} and adaptive["importance_method"] in (
        "fANOVA", "PED-ANOVA")
    table = runner.invoke(main, ["analyze", str(out)])
    assert f"best trial {adaptive['best']['trial']}:" in table.output and "parameter importances (" in table.output
    done = runner.invoke(main, ["plot", "optimization", str(out), "-o", str(tmp_path / "opt.png")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "opt.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    status = runner.invoke(main, ["status", str(out)])
    assert status.exit_code == 0 and status.output.count("finished") >= 1
    done = runner.invoke(main, ["report", str(out), "-o", str(tmp_path / "report.html"), "--document", str(doc)])
    assert done.exit_code == 0, done.output
    report = (tmp_path / "report.html").read_text()
    assert "Adaptive design (Optuna)" in report and f"best trial {adaptive['best']['trial']}:" in report


def test_several_responses_give_the_pareto_front(tmp_path: Path) -> None:
    design = {"method": "optuna", "sampler": "nsga2", "trials": 6, "batch": 3,
              "response": ["testing:objective:mean", "testing:objective:max"], "direction": ["maximize", "minimize"]}
    doc, out = campaign(tmp_path, document(design, repetitions=1))
    optimize(doc, out)
    told = trials(out)
    assert len(told) == 6 and all(len(values) == 2 for _, _, _, values in told)
    done = CliRunner().invoke(main, ["analyze", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    adaptive = json.loads(done.output[done.output.index("{"):done.output.rindex("}") + 1])["optuna"]
    from xdoe.design._optuna import OptunaSettings, open_study

    study = open_study(out / "optuna-quad.journal", "quad", OptunaSettings())
    assert {row["trial"] for row in adaptive["pareto"]} == {t.number for t in study.best_trials}
    for row in adaptive["pareto"]:  # the values told are the values analysed
        assert row["values"] == study.trials[row["trial"]].values
    # analysing the second response: the same front (it was built from the analysed response and the
    # design's others, the analysed one twice, with the directions shifted)
    done = CliRunner().invoke(main, ["analyze", str(out), "--format", "json", "-r", "testing:objective:max"])
    assert done.exit_code == 0, done.output
    second = json.loads(done.output[done.output.index("{"):done.output.rindex("}") + 1])["optuna"]
    assert second["pareto"] == adaptive["pareto"] and second["direction"] == "minimize"
    # the report gives the same front (it gave the best trial of the analysed response alone)
    done = CliRunner().invoke(main, ["report", str(out), "-o", str(tmp_path / "report.html"), "--document", str(doc)])
    assert done.exit_code == 0, done.output
    report = (tmp_path / "report.html").read_text()
    assert report.count("Pareto front: trial") == len(adaptive["pareto"])
    for row in adaptive["pareto"]:
        assert f"Pareto front: trial {row['trial']}:" in report


def test_a_bad_response_is_refused_before_anything_runs(tmp_path: Path) -> None:
    design = {"method": "optuna", "trials": 4, "batch": 2, "response": "testing:score:mean"}
    doc, out = campaign(tmp_path, document(design))
    done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(out), "--in-process", "-q"])
    assert done.exit_code == 2 and "unknown metric 'score'" in done.output
    assert not (out / "xrun.sqlite").exists()


def test_optimize_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    doc = tmp_path / "doc.yaml"
    doc.write_text(json.dumps(document({"method": "optuna", "trials": 4})))
    done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(tmp_path / "none")])
    assert done.exit_code == 2 and "run xgen generate first" in done.output
    doc.write_text(json.dumps(document({"method": "sobol", "n": 4})))
    generate(doc, tmp_path / "sobol")
    done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(tmp_path / "sobol")])
    assert done.exit_code == 2 and "needs design: {method: optuna" in done.output


def test_a_batchs_scores_are_read_from_its_runs_only_with_the_same_answer(tmp_path: Path) -> None:
    """``trial_values`` reads the scores of the trials it tells (``load_scores(runs=...)``):
    the same rows, values and phase as the whole experiment's table restricted to them."""
    from xdoe.analysis import load_scores, parse_response, run_table
    from xdoe.design import OptunaStudy
    from xdoe.design.runfiles import prepare

    design = {"method": "optuna", "sampler": "random", "trials": 6, "batch": 3}
    doc, out = campaign(tmp_path, document(design, repetitions=2))
    optimize(doc, out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    runs = OptunaStudy(prepare(doc)[2], out).trial_runs()
    batch = sorted(u for t in (3, 4, 5) for u in runs[t])
    for text in ("", "testing:objective:max", "testing:steps:mean"):
        response = parse_response(text or None)
        whole = load_scores(url, response, "quad")
        some = load_scores(url, response, "quad", runs=batch)
        assert sorted(some["run"]) == batch and some.attrs == whole.attrs
        expected = whole[whole["run"].isin(batch)].reset_index(drop=True)
        assert some.reset_index(drop=True).equals(expected[list(some.columns)])
        table, phase = run_table(some, response)
        full, full_phase = run_table(whole, response)
        assert phase == full_phase
        assert dict(zip(table["run"], table["y"])) == {r: y for r, y in zip(full["run"], full["y"]) if r in batch}


def test_a_batch_just_written_runs_from_the_writers_documents_and_the_file_stays_the_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``load_file_plan(path, written)`` with the writer's ``(text, document)``
    (:meth:`OptunaStudy.documents`): the plans of the pending batch come from
    the documents the writer dumped (no YAML parse), equal to the plans parsed
    from the files, under the files' sha256; a file changed since is parsed
    from disk."""
    import hashlib

    import xdoe.documents
    from xdoe.design import OptunaStudy
    from xdoe.design.runfiles import prepare
    from xdoe.execution import load_file_plan

    design = {"method": "optuna", "sampler": "random", "trials": 4, "batch": 2}
    doc, out = campaign(tmp_path, document(design, repetitions=2))
    study = OptunaStudy(prepare(doc)[2], out)
    files = study.files(study.pending())
    written = {path: (text, data) for path, text, data in study.documents(study.pending())}
    assert sorted(written) == sorted(files) and len(files) == 4
    parsed = {path: load_file_plan(path) for path in files}
    parses: list[Path] = []
    load_yaml = xdoe.documents.load_yaml
    monkeypatch.setattr(xdoe.documents, "load_yaml",
                        lambda path, **kw: parses.append(Path(path)) or load_yaml(path, **kw))
    for path in files:
        plan, sha = load_file_plan(path, written[path])
        assert (plan, sha) == parsed[path]
        assert plan.file_sha256 == sha == hashlib.sha256(path.read_bytes()).hexdigest()
    assert parses == []  # the writer's documents, not the files' YAML
    files[0].write_text(files[0].read_text() + "# edited\n")
    plan, sha = load_file_plan(files[0], written[files[0]])
    assert parses == [files[0]] and sha == hashlib.sha256(files[0].read_bytes()).hexdigest() != parsed[files[0]][1]
    assert plan == load_file_plan(files[0])[0]