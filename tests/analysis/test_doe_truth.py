"""Known-truth DoE studies (issue 24) through xgen, the executor, the store
and ``xrun analyze --format json``: a 16-run resolution IV screen of seven
two-level factors finds exactly the active ones with their signs; a central
composite design on two continuous factors puts the stationary maximum where
the formula has it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from doe_truth import MAXIMUM, SCREENING, STATIONARY, run_folder, screening_document, surface_document
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate


def _analyze(folder: Path) -> dict:
    result = CliRunner().invoke(xrun, ["analyze", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def screen(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("screen") / "out"
    generate(screening_document(), out)
    run_folder(out)
    return out


@pytest.fixture(scope="module")
def ccd(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ccd") / "out"
    generate(surface_document(), out)
    run_folder(out)
    return out


def test_resolution_iv_screen_finds_exactly_the_active_factors_with_their_signs(screen):
    assert len(list(screen.glob("run-*.yaml"))) == 16
    data = _analyze(screen)
    factors = {f["name"]: f for f in data["factors"]}
    assert set(factors) == set("abcdefg")
    assert {n for n, f in factors.items() if f["active"]} == set(SCREENING)
    for name, effect in SCREENING.items():
        assert factors[name]["effect"] == pytest.approx(effect, abs=0.15)
        assert factors[name]["p"] < 0.001
        # resolution IV: main effects clear of two-factor interactions (their chains hold three-factor ones)
        assert all(a.lstrip("-").count("*") == 2 for a in factors[name]["aliases"])
    assert data["screening"]["method"] == "lenth" and data["screening"]["source"] == "manifest"
    assert len(data["screening"]["effects"]) == 15


def test_csv_holds_the_screening_table_too(screen):
    """``--format csv`` holds everything the table shows (issue 22): the
    contrasts with their effects, p, active flags and aliases."""
    import csv
    import io

    result = CliRunner().invoke(xrun, ["analyze", str(screen), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = [r for r in csv.DictReader(io.StringIO(result.stdout)) if r["table"] == "design"]
    factor_rows = [r for r in csv.DictReader(io.StringIO(result.stdout)) if r["table"] == "factor"]
    assert {r["factor"] for r in factor_rows if r["active"] == "True"} == set(SCREENING)
    assert {r["column"] for r in rows if r["section"].startswith("Two-level screening")} >= {
        "effect (high - low)", "p", "active", "aliases"}
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    mains = [r for r in rows if r["table"] == "factor"]
    chains = [r for r in rows if r["table"] == "interaction"]
    other = {r["factor"] for r in rows if r["section"].startswith("Two-level screening")}
    # every contrast once: 7 main effects, the two-factor-interaction chains, the rest
    assert len({r["factor"] for r in mains}) == 7 and len(chains) + len(other) == 15 - 7
    assert all(r["method"].startswith("two-level screening: Lenth's PSE") for r in mains + chains)


def test_central_composite_puts_the_maximum_where_the_formula_has_it(ccd):
    surface = _analyze(ccd)["surface"]
    assert surface["kind"] == "maximum" and surface["inside"] is True
    for name, value in STATIONARY.items():
        assert surface["stationary_point"][name] == pytest.approx(value, abs=0.05)
    assert surface["predicted"] == pytest.approx(MAXIMUM, abs=0.2)
    assert surface["predicted_ci"][0] < surface["predicted"] < surface["predicted_ci"][1]
    assert surface["lack_of_fit"]["p"] > 0.01  # four centre points with seeds of their own: pure error


def test_centre_points_get_seeds_of_their_own(ccd):
    seeds = [line for p in sorted(ccd.glob("run-*.yaml")) for line in p.read_text().splitlines()
             if line.startswith("seed:")]
    assert len(set(seeds)) == len(seeds) == 12


@pytest.mark.parametrize("which", ["screen", "ccd"])
def test_design_plot_is_written(which, request, tmp_path):
    folder = request.getfixturevalue(which)
    target = tmp_path / f"{which}.png"
    result = CliRunner().invoke(xrun, ["plot", "design", str(folder), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _instances(out: Path) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(out / "xrun.sqlite") as db:
        rows = db.execute("select run.uid, count(*) from run_instance join run on run.id = run_instance.run_id "
                          "group by run.uid").fetchall()
    return dict(rows)


def _start(out: Path) -> None:
    result = CliRunner().invoke(xrun, ["experiment-start", str(out), "--store", f"sqlite:///{out / 'xrun.sqlite'}",
                                       "--results", str(out / "results"), "--in-process", "-q"])
    assert result.exit_code == 0, result.output


def test_sequential_factorial_then_axial_runs_only_the_new_points_and_finds_the_maximum(tmp_path):
    from xdoe.cli._xgen import main as xgen

    import yaml

    doc = tmp_path / "seq.yaml"
    doc.write_text(yaml.safe_dump(surface_document({"method": "fractional_factorial", "resolution": 5,
                                                    "center": 3})))
    out = tmp_path / "out"
    assert CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"]).exit_code == 0
    _start(out)
    first = _analyze(out)
    assert first["screening"]["curvature"]["p"] < 0.001  # the cube misses the peak at the centre
    assert not any(f["active"] for f in first["factors"])  # no linear effect: a symmetric peak
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--axial"])
    assert result.exit_code == 0, result.output
    _start(out)
    instances = _instances(out)
    assert len(instances) == 7 + 7 and set(instances.values()) == {1}  # the first 7 runs were not run again
    surface = _analyze(out)["surface"]
    assert "block[1]" in surface["coefficients"]
    assert surface["kind"] == "maximum"
    for name, value in STATIONARY.items():
        assert surface["stationary_point"][name] == pytest.approx(value, abs=0.05)


def test_foldover_runs_only_the_new_points(screen, tmp_path):
    import shutil

    from xdoe.cli._xgen import main as xgen

    import yaml

    out = tmp_path / "out"
    shutil.copytree(screen, out)
    doc = tmp_path / "screen.yaml"
    doc.write_text(yaml.safe_dump(screening_document()))
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--foldover", "a"])
    assert result.exit_code == 0, result.output
    _start(out)
    assert len(_instances(out)) == 32 and set(_instances(out).values()) == {1}
    data = _analyze(out)
    assert {f["name"] for f in data["factors"] if f["active"]} == set(SCREENING)
    assert any(e["name"] == "block" for e in data["screening"]["effects"])


def test_morris_study_ranks_the_stronger_factor_first_and_draws_mu_star_sigma(tmp_path):
    pytest.importorskip("SALib")
    doc = surface_document({"method": "morris", "trajectories": 10, "levels": 4})
    doc["uid"] = "morris"
    out = tmp_path / "out"
    generate(doc, out)
    run_folder(out)
    data = _analyze(out)
    rows = data["sensitivity"]
    assert data["sensitivity_method"] == "morris" and [r["name"] for r in rows] == ["x2", "x1"]  # 2 (x2-7)^2
    assert all(r["mu_star"] > 0 and r["sigma"] > 0 for r in rows)
    target = tmp_path / "morris.png"
    result = CliRunner().invoke(xrun, ["plot", "design", str(out), "-o", str(target)])
    assert result.exit_code == 0 and target.read_bytes()[:4] == b"\x89PNG"


def test_report_holds_the_surface_analysis_and_its_contour_plot(ccd, tmp_path):
    target = tmp_path / "report.html"
    result = CliRunner().invoke(xrun, ["report", str(ccd), "-o", str(target)])
    assert result.exit_code == 0, result.output
    text = target.read_text()
    assert "Canonical analysis" in text and "Fitted second-order surface" in text
    # the design points stay the last section: the aggregates heading introduces them
    aggregates = text.split('id="aggregates"', 1)[1]
    assert "Design points ranked by IQM over runs" in aggregates.split("</table>", 1)[0]


def test_without_the_folder_the_coding_comes_from_the_store(ccd):
    """``-e UID`` on the store alone: the design xrun recorded from the
    manifest (schema 4), the same stationary point in natural units."""
    result = CliRunner().invoke(xrun, ["analyze", "--store", f"sqlite:///{ccd / 'xrun.sqlite'}", "-e", "surface",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    inferred = json.loads(result.stdout)["surface"]
    assert inferred["source"] == "store"
    manifest = _analyze(ccd)["surface"]
    for name in STATIONARY:
        assert inferred["stationary_point"][name] == pytest.approx(manifest["stationary_point"][name])
    assert inferred["kind"] == "maximum" and inferred["predicted"] == pytest.approx(manifest["predicted"])


def test_the_effects_picture_of_a_surface_names_its_whole_model_and_each_effect(ccd, tmp_path):
    """The panels of a response surface give each factor's effect as the tables do, and the title names the
    model whole: it was cut at the ';' inside its parenthesis ("second-order model in coded units (OLS")."""
    import re

    answer = _analyze(ccd)
    done = CliRunner().invoke(xrun, ["plot", "effects", str(ccd), "-o", str(tmp_path / "e.svg")])
    assert done.exit_code == 0, done.output
    text = " ".join(re.findall(r">([^<>]+)</text>", (tmp_path / "e.svg").read_text("utf-8")))
    residual = re.search(r"residual df \d+", answer["methods"]["factors"]).group(0)
    assert f"p and partial η² from second-order model in coded units (OLS; {residual})" in text
    for f in answer["factors"]:
        assert f"{f['name']}: effect {f['effect']:.3g}, " in text
