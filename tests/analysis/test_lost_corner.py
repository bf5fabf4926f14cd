"""A two-level design whose every run of one corner failed (doe_truth.corner_truth):
the screening model cannot separate the factors any more, so ``xrun analyze``
answers with the type II ANOVA and says why; it crashed with ``KeyError: 'b'``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from doe_truth import corner_document

from xdoe.analysis import analyze, load_scores, parse_response
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate


def test_a_corner_whose_runs_all_failed_is_answered_by_the_anova(tmp_path: Path) -> None:
    out = tmp_path / "_outputs"
    generate(corner_document(), out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    done = CliRunner().invoke(xrun, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", url, "--results", str(out / "results")])
    assert done.exit_code == 1, done.output  # the corner's three runs failed, the others ran
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["runs"] == 9 and sorted(f["name"] for f in body["factors"]) == ["a", "b"]
    assert "type II ANOVA" in body["methods"]["factors"]
    (note,) = [w for w in body["warnings"] if "screening model cannot estimate" in w]
    assert "main effect of b" in note and "3 setting(s)" in note
    assert any("3 failed" in w for w in body["warnings"])
    # the dashboard's path (the database's scores, no output folder) answers the same
    store = analyze(load_scores(url, parse_response(None), "corner"))
    assert store.runs == 9 and any("screening model cannot estimate" in w for w in store.warnings)
    assert {f.name: f.effect for f in store.factors} == {f["name"]: f["effect"] for f in body["factors"]}
