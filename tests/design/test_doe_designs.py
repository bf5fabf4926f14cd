"""The DoE designs of issue 24 against the standard tables (NIST/SEMATECH
e-Handbook 5.3.3; Montgomery, Design and Analysis of Experiments, 8th ed.)
and the conformance rules every design follows."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from dummy_study import dummy_study

from xdoe.design import Factor, make_design, parse_design
from xdoe.design.runfiles import generate
from xdoe.errors import DesignError, DocumentError


def two(names: str) -> list[Factor]:
    return [Factor(n, levels=(0, 1)) for n in names]


def cont(names: str) -> list[Factor]:
    return [Factor(n, low=0.0, high=10.0) for n in names]


# NIST/SEMATECH 5.3.3.4.7 "Summary tables of useful fractional factorial designs":
# (factors, resolution) -> runs of the minimum-run design
NIST_RUNS = [(3, 3, 4), (4, 4, 8), (5, 3, 8), (5, 5, 16), (6, 3, 8), (6, 4, 16), (7, 3, 8), (7, 4, 16),
             (8, 4, 16), (8, 5, 64), (9, 3, 16), (9, 4, 32), (10, 4, 32), (11, 3, 16), (11, 4, 32), (15, 3, 16)]


@pytest.mark.parametrize("k,res,runs", NIST_RUNS)
def test_fractional_factorial_runs_and_resolution_match_the_nist_table(k, res, runs):
    names = "abcdefghijklmno"[:k]
    design = make_design(two(names), method={"method": "fractional_factorial", "resolution": res})
    assert len(design) == runs
    found = design.diagnostics["resolution"]
    assert found is not None and found >= res
    assert design.diagnostics["d_efficiency"] == pytest.approx(100.0)  # orthogonal main effects


def test_seven_factors_at_resolution_iv_take_sixteen_runs_with_clear_main_effects():
    design = make_design(two("abcdefg"), method={"method": "fractional_factorial", "resolution": 4})
    assert len(design) == 16 and design.diagnostics["resolution"] == 4
    aliases = design.diagnostics["aliases"]
    assert not any(name in aliases for name in "abcdefg")  # main effects clear of two-factor interactions
    assert all(len(v) == 2 for k, v in aliases.items())  # 21 two-factor interactions in 7 chains of 3


def test_aliases_of_the_nist_two_to_the_seven_minus_three_design():
    # E = ABC, F = BCD, G = ACD (NIST 5.3.3.4.7, the 2^(7-3) IV design)
    design = make_design(two("ABCDEFG"), method={"method": "fractional_factorial",
                                                  "generators": "a b c d abc bcd acd"})
    assert len(design) == 16 and design.diagnostics["resolution"] == 4
    chains = {frozenset({"A*B", "C*E", "F*G"}), frozenset({"A*C", "B*E", "D*G"}), frozenset({"A*D", "C*G", "E*F"}),
              frozenset({"A*E", "B*C", "D*F"}), frozenset({"A*F", "B*G", "D*E"}), frozenset({"A*G", "B*F", "C*D"}),
              frozenset({"B*D", "C*F", "E*G"})}
    found = {frozenset({term, *others}) for term, others in design.diagnostics["aliases"].items()}
    assert found == chains


def test_a_resolution_iii_fraction_aliases_main_effects_with_signed_interactions():
    design = make_design(two("ABC"), method={"method": "fractional_factorial", "generators": "a b -ab"})
    assert design.diagnostics["resolution"] == 3
    assert design.diagnostics["aliases"]["C"] == ["-A*B"]


def test_plackett_burman_twelve_runs_for_eleven_factors_orthogonal_with_partial_aliases():
    design = make_design(two("abcdefghijk"), method={"method": "plackett_burman"})
    diag = design.diagnostics
    assert len(design) == 12 and diag["max_correlation"] == 0.0 and diag["d_efficiency"] == pytest.approx(100)
    assert diag["resolution"] == 3
    partial = diag["aliases"]["a"]
    assert len(partial) == 45 and all(abs(abs(r) - 1 / 3) < 1e-6 for _, r in partial)
    assert [len(make_design(two("abcdefghijklmnopqrs"[:k]), method={"method": "plackett_burman"}))
            for k in (7, 11, 19)] == [8, 12, 20]


@pytest.mark.parametrize("k,alpha", [(2, 2 ** 0.5), (3, 8 ** 0.25), (4, 2.0)])
def test_rotatable_central_composite_alpha_and_runs(k, alpha):
    # Montgomery 11.4.2: rotatable alpha = F^(1/4), F = 2^k factorial runs
    design = make_design(cont("xyzw"[:k]), method={"method": "central_composite", "center": 5})
    coded = design.coded()
    assert len(design) == 2**k + 2 * k + 5
    assert np.abs(coded).max() == pytest.approx(alpha)
    assert design.info["alpha_value"] == pytest.approx(alpha)
    # the axial points lie outside the range: the factor is widened, the cube keeps its natural values
    x = design.factors[0]
    assert x.low == pytest.approx(5 - 5 * alpha) and x.high == pytest.approx(5 + 5 * alpha)
    cube = [design.values(i)["x"] for i in range(2**k)]
    assert sorted(set(np.round(cube, 9))) == [0.0, 10.0]


def test_faced_and_inscribed_central_composite_stay_inside_the_range():
    for face in ("faced", "inscribed"):
        design = make_design(cont("xy"), method={"method": "central_composite", "face": face, "center": 2})
        assert np.abs(design.coded()).max() == pytest.approx(1.0)
        assert design.factors[0].low == 0.0 and design.factors[0].high == 10.0
    faced = make_design(cont("xy"), method={"method": "central_composite", "face": "faced", "center": 2})
    assert sorted(set(faced.coded()[:, 0])) == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("k,runs", [(3, 12), (4, 24), (5, 40)])
def test_box_behnken_runs(k, runs):
    design = make_design(cont("xyzwv"[:k]), method={"method": "box_behnken", "center": 3})
    assert len(design) == runs + 3
    assert set(np.unique(design.coded())) == {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("method", ["box_behnken", "central_composite"])
def test_a_response_surface_design_made_by_its_function_reports_the_quadratic_model(method):
    """``xdoe.design.box_behnken(factors).diagnostics`` is the dry run's (``make_design``'s):
    the quadratic model's D-efficiency, pydoe's ``d_efficiency`` of the 10 terms of three
    factors (36.6 % for the published 15-run Box-Behnken design); it gave the linear
    model's 62.4 %."""
    import itertools

    import pydoe

    from xdoe.design import box_behnken, central_composite

    made = {"box_behnken": box_behnken, "central_composite": central_composite}[method](cont("xyz"), {"center": 3})
    assert made.diagnostics == make_design(cont("xyz"), method={"method": method, "center": 3}).diagnostics
    x = made.coded()
    terms = [np.ones(len(x)), *x.T, *(x[:, i] * x[:, j] for i, j in itertools.combinations(range(3), 2)), *(x.T ** 2)]
    assert made.diagnostics["model"] == "quadratic" and made.diagnostics["terms"] == 10
    assert made.diagnostics["d_efficiency"] == pytest.approx(pydoe.d_efficiency(np.column_stack(terms)), rel=1e-10)


def test_log_factor_widened_in_log_space():
    f = Factor("lr", low=1e-4, high=1e-2, scale="log")
    design = make_design([f, Factor("g", low=0.9, high=0.99)], method={"method": "central_composite"})
    lr = design.factors[0]
    assert math.sqrt(lr.low * lr.high) == pytest.approx(1e-3)  # centred on the geometric mean
    centre = [design.values(i)["lr"] for i in range(len(design)) if not design.coded()[i].any()]
    assert centre and all(v == pytest.approx(1e-3) for v in centre)


def test_d_optimal_linear_reaches_the_orthogonal_optimum():
    design = make_design(two("abcd"), method={"method": "d_optimal", "runs": 8}, seed=0)
    assert design.diagnostics["d_efficiency"] == pytest.approx(100.0)
    assert design.diagnostics["max_correlation"] == pytest.approx(0.0)


def test_d_optimal_candidates_respect_conditional_factors():
    factors = [Factor("agent", levels=("learner", "random")),
               Factor("lr", levels=(0.1, 0.5), when=(("agent", ("learner",)),)),
               Factor("b", levels=(0, 1))]
    design = make_design(factors, method={"method": "d_optimal", "runs": 5}, seed=0)
    for i in range(len(design)):
        values = design.values(i)
        assert ("lr" in values) == (values["agent"] == "learner")
    assert len({json.dumps(design.values(i), sort_keys=True) for i in range(len(design))}) == len(design)


@pytest.mark.parametrize("spec,message", [
    ({"method": "fractional_factorial"}, "two-level"),
    ({"method": "central_composite"}, "continuous"),
    ({"method": "d_optimal", "runs": 2}, "at least"),
    ({"method": "sobol"}, "needs n"),
])
def test_refusals(spec, message):
    factors = [Factor("a", levels=(1, 2, 3)), Factor("x", low=0, high=1)]
    with pytest.raises(DesignError, match=message):
        make_design(factors, method=spec)


def test_morris_with_an_odd_number_of_levels_is_refused():
    """With p = 3 levels Morris's step p / (2 (p - 1)) = 3/4 leaves the grid {0, 1/2, 1}: SALib
    only warns that the sample may be biased, and the points landed at coded +0.5."""
    pytest.importorskip("SALib")
    factors = [Factor("x", low=0, high=1), Factor("y", low=0, high=1)]
    with pytest.raises(DesignError, match="levels must be even"):
        make_design(factors, method={"method": "morris", "levels": 3, "trajectories": 2})
    grid = make_design(factors, method={"method": "morris", "levels": 6, "trajectories": 3}, seed=1).unit()
    assert set(np.round(grid.ravel() * 5, 9)) <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}  # an even p stays on its grid


def test_design_larger_than_max_runs_refused():
    with pytest.raises(DesignError, match="max_runs 10"):
        make_design(two("abcdefg"), method={"method": "fractional_factorial", "resolution": 4}, max_runs=10)


@pytest.mark.parametrize("value,message", [
    ({"method": "fractional_factorial", "resolution": 6}, "resolution must be one of 3, 4, 5"),
    ({"method": "central_composite", "face": "round"}, "face must be one of"),
    ({"method": "box_behnken", "centre": 3}, "unknown option 'centre'"),
    ({"method": "nope"}, "unknown or missing method"),
    ({"method": "fractional_factorial", "resolution": 4, "generators": "a b ab"}, "not both"),
    ({"method": "central_composite", "face": "faced", "alpha": "orthogonal"}, "does not apply to face: faced"),
    ({"method": "central_composite", "face": "faced", "alpha": "rotatable"}, "does not apply to face: faced"),
])
def test_parse_design_refusals(value, message):
    with pytest.raises(DesignError, match=message):
        parse_design(value)


def _doc(design, factors=None):
    return dummy_study("doe", 5, design, factors or {"x": {"range": [1, 5]}, "y": {"range": [5, 9]}})


def test_generate_writes_byte_identical_runs_and_a_manifest_with_coded_and_natural_points(tmp_path):
    doc = _doc({"method": "central_composite", "center": 3})
    generate(doc, tmp_path / "a")
    generate(doc, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").glob("run-*.yaml"))
    assert len(names) == 4 + 4 + 3
    for name in names + ["design.csv"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    doe = manifest["design"]["doe"]
    assert doe["coding"]["x"] == {"minus": 1.0, "plus": 5.0, "scale": "linear"}
    assert doe["points"][0] == {"coded": [-1.0, -1.0], "natural": {"x": 1.0, "y": 5.0}}
    assert doe["diagnostics"]["model"] == "quadratic" and doe["diagnostics"]["d_efficiency"] > 0


def test_a_bad_design_option_is_located_in_the_document(tmp_path):
    path = tmp_path / "e.yaml"
    import yaml

    path.write_text(yaml.safe_dump(_doc({"method": "central_composite", "face": "round"})))
    with pytest.raises(DocumentError, match=r"e\.yaml:\d+.*design.*face must be one of"):
        generate(path)
