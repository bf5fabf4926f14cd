"""design: {method: optuna} (issue 37): options, the first batch written by
the one writer, the study beside the manifest, and the limits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from optuna_truth import document
from xdoe.design.runfiles import generate
from xdoe.design._optuna import OptunaSettings, open_study, study_params
from xdoe.documents import parse_design
from xdoe.errors import DesignError, DocumentError
from xdoe._extras import install_command

DESIGN = {"method": "optuna", "sampler": "tpe", "trials": 8, "batch": 3}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".yaml", ".csv", ".json")}


def test_options_are_checked() -> None:
    spec = parse_design({**DESIGN, "response": ["testing:objective:mean", "testing:steps:mean"],
                         "direction": ["maximize", "minimize"], "repetitions_per_trial": 2})
    assert spec.options["direction"] == ["maximize", "minimize"]
    with pytest.raises(DesignError, match="sampler must be one of tpe, cmaes, gp, random, nsga2"):
        parse_design({**DESIGN, "sampler": "hyperopt"})
    with pytest.raises(DesignError, match="needs trials"):
        parse_design({"method": "optuna"})
    with pytest.raises(DesignError, match="same length"):
        parse_design({**DESIGN, "response": ["a", "b"], "direction": ["maximize"] * 3})
    with pytest.raises(DesignError, match="2 directions for one response"):  # before: one response, two objectives
        parse_design({**DESIGN, "direction": ["maximize", "minimize"]})
    with pytest.raises(DesignError, match="2 directions for one response"):
        parse_design({**DESIGN, "response": "testing:objective:mean", "direction": ["maximize", "minimize"]})


@pytest.mark.parametrize(("option", "value", "message"), [
    ("response", "train:objective:mean", "names the phase 'train', which the schedule does not have "
                                         r"\(phases: testing; or an index 0..0\)"),
    ("response", ["testing:objective:mean", "3:reward:max"], "names the phase '3'"),
    ("agent", "learner", r"agent 'learner' is none of the document's agents \(random\)"),
])
def test_a_response_or_agent_the_runs_do_not_record_is_refused_before_anything_is_written(
        tmp_path: Path, option: str, value: object, message: str) -> None:
    """Before: xgen wrote the first batch, and xrun optimize told every trial
    FAIL (no such phase or agent in any run) and ended with exit 0 and no best."""
    design = {**DESIGN, option: value}
    if isinstance(value, list):
        design["direction"] = ["maximize", "minimize"]
    doc = tmp_path / "study.yaml"
    doc.write_text(json.dumps(document(design), indent=1))
    with pytest.raises(DocumentError, match=message) as caught:
        generate(doc, tmp_path / "out")
    assert caught.value.key_path == ("design",) and caught.value.line is not None  # located at design:
    assert not (tmp_path / "out").exists()  # nothing written
    generate(document({**DESIGN, "response": "0:objective:mean", "agent": "random"}), tmp_path / "ok")


def test_the_first_batch_is_byte_identical_and_seeded(tmp_path: Path) -> None:
    first = generate(document(DESIGN, repetitions=2), tmp_path / "a")
    generate(document(DESIGN, repetitions=2), tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert len(first.runs) == 6 and first.design.method == "optuna"  # 3 trials x 2 repetitions
    other = generate(document(DESIGN, seed=12, repetitions=2), tmp_path / "c")
    assert [other.design.values(i) for i in range(3)] != [first.design.values(i) for i in range(3)]
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    info = manifest["design"]["doe"]["info"]
    assert info["trial_runs"] == {"0": ["quad-0000", "quad-0003"], "1": ["quad-0001", "quad-0004"],
                                  "2": ["quad-0002", "quad-0005"]}
    assert (info["sampler"], info["trials"], info["batch"], info["storage"]) == ("tpe", 8, 3, "optuna-quad.journal")


def test_the_study_holds_the_first_batch_as_its_trials(tmp_path: Path) -> None:
    gen = generate(document(DESIGN), tmp_path)
    study = open_study(tmp_path / "optuna-quad.journal", "quad", OptunaSettings.of(gen.design.info))
    trials = study.get_trials()
    assert [t.number for t in trials] == [0, 1, 2] and all(t.state.name == "RUNNING" for t in trials)
    for t in trials:  # the trial's parameters are the values its run documents hold
        run = json.loads(json.dumps(gen.runs[t.number]))
        assert run["design_point"]["levels"] == t.params == study_params(gen.design, t.number)


def test_levels_integers_and_log_scales(tmp_path: Path) -> None:
    factors = {"x1": {"range": [1, 5], "integer": True}, "x2": {"range": [5, 9], "scale": "log"},
               "x3": {"levels": [0.0, 1.5, 3.0]}}
    gen = generate(document({**DESIGN, "batch": 6}, factors=factors), tmp_path)
    for i in range(len(gen.design)):
        levels = gen.runs[i]["design_point"]["levels"]
        assert isinstance(levels["x1"], int) and 1 <= levels["x1"] <= 5
        assert 5 <= levels["x2"] <= 9 and levels["x3"] in (0.0, 1.5, 3.0)
    from xdoe.design._optuna import distributions

    dists = distributions(gen.design.factors)
    assert type(dists["x1"]).__name__ == "IntDistribution" and dists["x2"].log
    assert dists["x3"].choices == (0.0, 1.5, 3.0)


def test_every_trial_counts_against_max_total_runs() -> None:
    doc = document({**DESIGN, "trials": 60, "repetitions_per_trial": 3})
    doc["max_total_runs"] = 100
    with pytest.raises(DocumentError, match=r"design.trials: trials 60: design optuna has 60 trials x 3 repetition\(s\) per trial = 180 runs"):
        generate(doc)


def test_without_the_extra_xgen_names_it(tmp_path: Path) -> None:
    doc = tmp_path / "doc.yaml"
    doc.write_text(json.dumps(document(DESIGN)))
    code = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'optuna':\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Block())\nfrom xdoe.cli._xgen import main\n"
            f"main(['generate', {str(doc)!r}, '-o', {str(tmp_path / 'out')!r}])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "optuna" in done.stderr and install_command("optuna") in done.stderr
    assert not (tmp_path / "out").exists()


def test_xgen_augment_leaves_an_optuna_design_to_xrun_optimize(tmp_path: Path) -> None:
    from xdoe.design.runfiles import augment_runs, prepare
    from xdoe.errors import InputError

    generate(document(DESIGN), tmp_path)
    with pytest.raises(InputError, match="grows by xrun optimize"):
        augment_runs(prepare(document(DESIGN))[2], tmp_path, {"add": 2})
