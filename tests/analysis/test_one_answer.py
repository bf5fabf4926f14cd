"""One answer per design (issue 32), on known-truth studies run through xgen,
the executor and the store:

* every row of the factor and interaction tables recomputes, with scipy,
  from the one model and the degrees of freedom it prints (Lenth's t on
  ``m / 3`` df, the pure-error t with ``F = t^2``, the ANOVA's and the
  second-order model's F);
* a level order opposite to numeric order gives one sign everywhere (the
  folder's manifest, the store alone, CSV, the Python API, the report);
* a planted three-factor interaction after a fold-over is reported under
  its alias chain, not as a block interaction;
* replicated centre points are one design point; a saddle is a saddle.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

from doe_truth import (
    THREE_WAY,
    interaction_document,
    reversed_screening_document,
    run_folder,
    saddle_document,
    surface_document,
)
from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate


def _analyze(*args: str, fmt: str = "json") -> str:
    result = CliRunner().invoke(xrun, ["analyze", *args, "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.stdout


def _data(*args: str) -> dict:
    return json.loads(_analyze(*args))


def _study(tmp_path_factory: pytest.TempPathFactory, name: str, doc: dict) -> Path:
    out = tmp_path_factory.mktemp(name) / "out"
    generate(doc, out)
    run_folder(out)
    return out


@pytest.fixture(scope="module")
def reversed_screen(tmp_path_factory) -> Path:
    return _study(tmp_path_factory, "reversed", reversed_screening_document())


@pytest.fixture(scope="module")
def folded(tmp_path_factory) -> Path:
    """The 8-run resolution III fraction with a planted x1*x2*x3, folded over (a second block)."""
    root = tmp_path_factory.mktemp("three-way")
    doc = root / "three-way.yaml"
    doc.write_text(yaml.safe_dump(interaction_document()))
    out = root / "out"
    assert CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"]).exit_code == 0
    run_folder(out)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--foldover"])
    assert result.exit_code == 0, result.output
    run_folder(out, sorted(out.glob("run-*.yaml"))[8:])
    return out


@pytest.fixture(scope="module")
def centred(tmp_path_factory) -> Path:
    """A 2^2 factorial with three centre points around the peak of the surface study."""
    doc = surface_document({"method": "fractional_factorial", "resolution": 5, "center": 3})
    doc["uid"] = "centred"
    return _study(tmp_path_factory, "centred", doc)


@pytest.fixture(scope="module")
def saddle(tmp_path_factory) -> Path:
    return _study(tmp_path_factory, "saddle", saddle_document())


@pytest.fixture(scope="module")
def categorical(tmp_path_factory) -> Path:
    """A full factorial with a three-level factor: the type II ANOVA."""
    from synthetic import document

    doc = document(repetitions=2)
    doc["uid"] = "categorical"
    doc["factors"]["null"] = {"levels": [0, 1, 2]}
    return _study(tmp_path_factory, "categorical", doc)


@pytest.fixture(scope="module")
def two_level_full(tmp_path_factory) -> Path:
    """A replicated 2^3 full factorial (design: full_factorial): the screening model on pure error."""
    from synthetic import document

    return _study(tmp_path_factory, "full", document(repetitions=2))


def _check_row(row: dict) -> None:
    method, df = row["method"], row["df"]
    if method == "lenth":
        assert row["F"] is None and row["eta_sq"] is None
        assert row["p"] == pytest.approx(2 * stats.t.sf(abs(row["t"]), df[1]), rel=1e-9)
    elif method == "pure error":
        assert df[0] == 1 and row["F"] == pytest.approx(row["t"] ** 2, rel=1e-12)
        assert row["p"] == pytest.approx(stats.f.sf(row["F"], 1, df[1]), rel=1e-9, abs=1e-300)
        assert row["p"] == pytest.approx(2 * stats.t.sf(abs(row["t"]), df[1]), rel=1e-9, abs=1e-300)
        assert row["eta_sq"] == pytest.approx(row["F"] / (row["F"] + df[1]), rel=1e-12)
    else:
        assert method in ("anova", "second-order model"), method
        F = row["F"]
        assert row["p"] == pytest.approx(stats.f.sf(F, df[0], df[1]), rel=1e-9, abs=1e-300)
        assert row["eta_sq"] == pytest.approx(F * df[0] / (F * df[0] + df[1]), rel=1e-9)


@pytest.mark.parametrize("study, model", [
    ("reversed_screen", "Lenth's PSE"), ("folded", "Lenth's PSE"), ("centred", "pure-error t test"),
    ("two_level_full", "pure-error t test"), ("saddle", "second-order model"), ("categorical", "type II ANOVA"),
])
def test_every_row_recomputes_from_the_one_model_its_header_names(study, model, request) -> None:
    folder = request.getfixturevalue(study)
    data = _data(str(folder))
    assert model in data["methods"]["factors"]
    rows = data["factors"] + data["interactions"]
    assert rows and len({r["method"] for r in rows}) == 1  # one model per output
    for row in rows:
        _check_row(row)
    table = _analyze(str(folder), fmt="markdown")
    assert table.count(model) >= 1 and "Factors ranked by effect size" not in table


def test_one_sign_everywhere_for_a_level_order_opposite_to_numeric_order(reversed_screen, tmp_path) -> None:
    from xdoe.analysis import analyze
    from xdoe.results import load

    url = f"sqlite:///{reversed_screen / 'xrun.sqlite'}"
    folder = {f["name"]: f for f in _data(str(reversed_screen))["factors"]}
    store = {f["name"]: f for f in _data("--store", url, "-e", "reversed")["factors"]}
    api = {f.name: f for f in analyze(load(url, experiment="reversed")).factors}
    # a: levels [1, 0], so low = 1 and high = 0: the reward falls by 3 from low to high
    assert folder["a"]["effect"] == pytest.approx(-3.0, abs=0.15)
    for name, row in folder.items():
        assert store[name]["effect"] == row["effect"]
        assert api[name].effect == pytest.approx(row["effect"], rel=1e-12)  # per-run means summed by pandas, not SQL
        assert [lv["level"] for lv in store[name]["levels"]] == [lv["level"] for lv in row["levels"]]
    assert [lv["level"] for lv in folder["a"]["levels"]] == [1, 0]  # low to high
    rows = [r for r in csv.DictReader(io.StringIO(_analyze("--store", url, "-e", "reversed", fmt="csv")))
            if r["table"] == "factor" and r["factor"] == "a"]
    assert {float(r["effect"]) for r in rows} == {folder["a"]["effect"]}
    report = tmp_path / "report.html"
    result = CliRunner().invoke(xrun, ["report", "--store", url, "-e", "reversed", "-o", str(report)])
    assert result.exit_code == 0, result.output
    from xdoe.analysis import fmt_num

    assert f"<td>a</td><td>two-level</td><td>{fmt_num(folder['a']['effect'])}</td>" in report.read_text()


def test_a_three_factor_interaction_after_a_fold_over_is_reported_under_its_alias_chain(folded) -> None:
    data = _data(str(folded))
    effects = data["screening"]["effects"]
    assert data["screening"]["blocks"] == 2 and len(effects) == 15
    planted = [e for e in effects if "x1*x2*x3" in [e["name"], *(a.lstrip("-") for a in e["aliases"])]]
    assert len(planted) == 1
    row = planted[0]
    assert row["active"] and row["effect"] == pytest.approx(2 * THREE_WAY, abs=0.2)
    assert not row["name"].startswith("block")  # named by the factors' interaction, not as a block interaction
    assert [e["name"] for e in effects if e["active"]] == [row["name"]]  # nothing else: no block effect
    assert not any("block" in i["name"] for i in data["interactions"])
    block = next(e for e in effects if e["name"] == "block")
    assert not block["active"]
    assert not any(f["active"] for f in data["factors"])


def test_replicated_centre_points_are_one_design_point(centred) -> None:
    data = _data(str(centred))
    centre = [p for p in data["points"] if p["levels"] == {"x1": 3.0, "x2": 7.0}]
    assert len(centre) == 1 and centre[0]["n"] == 3 and len(centre[0]["design_points"]) == 3
    assert len(data["points"]) == 5
    curvature = data["screening"]["curvature"]
    assert curvature["df"] == 2 and curvature["p"] < 0.001  # the cube misses the peak at the centre
    assert data["screening"]["method"] == "pure error"


def test_a_saddle_is_called_a_saddle(saddle) -> None:
    data = _data(str(saddle))
    surface = data["surface"]
    assert surface["kind"] == "saddle"
    assert surface["stationary_point"]["x1"] == pytest.approx(3.0, abs=0.05)
    assert surface["stationary_point"]["x2"] == pytest.approx(7.0, abs=0.05)
    assert {f["kind"] for f in data["factors"]} == {"continuous"}
    assert {f["method"] for f in data["factors"]} == {"second-order model"}
