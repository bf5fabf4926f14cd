"""``run_config.prune`` checked by xgen against the document: a phase or
agent the schedule lacks, or no train phase to default to, is refused at its
key before anything is written (before, xgen wrote the runs and ``xrun
experiment-start`` / ``xrun optimize`` refused each run file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dummy_study import known_truth_study
from xdoe.design.runfiles import generate
from xdoe.errors import DocumentError

FACTORS = {"x1": {"levels": [1.0, 2.0]}}


def _document(tmp_path: Path, prune: dict, mode: str = "test") -> Path:
    data = known_truth_study("pr", "math:hypot", FACTORS, "full_factorial", params={"x": "${x1}", "y": 1.0})
    data["definitions"]["phase_config"]["test"]["mode"] = mode
    data["definitions"]["run_config"]["prune"] = {"method": "successive_halving", "min_steps": 5, **prune}
    doc = tmp_path / "study.yaml"
    doc.write_text(json.dumps(data, indent=1))
    return doc


@pytest.mark.parametrize(("prune", "mode", "key", "message"), [
    ({"phase": "training"}, "train", "phase", r"no phase 'training' in the schedule to prune \(phases: testing; or "
                                              r"an index 0..0\)"),
    ({"phase": 1}, "train", "phase", "no phase 1 in the schedule"),
    ({}, "test", None, r"no train phase to prune \(phases: testing\); name the phase to prune with prune.phase"),
    ({"phase": "testing", "agent": "learner"}, "test", "agent", r"'learner' is none of the document's agents "
                                                                r"\(random\)"),
])
def test_a_prune_rule_naming_nothing_is_refused_at_its_key(tmp_path: Path, prune: dict, mode: str, key: str | None,
                                                            message: str) -> None:
    with pytest.raises(DocumentError, match=message) as caught:
        generate(_document(tmp_path, prune, mode), tmp_path / "out")
    assert caught.value.key_path == ("definitions", "run_config", "prune", *([key] if key else []))
    assert caught.value.line is not None and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("prune", "mode"), [({"phase": "testing"}, "test"), ({"phase": 0}, "test"),
                                             ({}, "train"), ({"agent": "random"}, "train")])
def test_a_prune_rule_naming_what_the_runs_have_is_generated(tmp_path: Path, prune: dict, mode: str) -> None:
    generate(_document(tmp_path, prune, mode), tmp_path / "out")
    assert len(list((tmp_path / "out").glob("run-*.yaml"))) == 2
