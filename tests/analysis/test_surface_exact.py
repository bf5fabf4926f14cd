"""The second-order model of a noise-free response (a deterministic
simulation): an exact quadratic has no lack of fit, its planted terms have
p 0 and the term it lacks p 1, never tests of rounding residue."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis._surface import factor_tests, surface
from xdoe.design import Factor, make_design

CODING = {n: {"minus": 0.0, "plus": 4.0, "scale": "linear"} for n in ("u", "v", "w")}


def _runs(f, names):
    design = make_design([Factor(n, low=0, high=4) for n in names],
                         method={"method": "central_composite", "center": 5})
    coded = pd.DataFrame(design.coded(), columns=names)
    y = np.array([f(*row) for row in coded.to_numpy()])
    return pd.DataFrame({"y": y, "design_point": range(len(y))}), coded


def test_an_exact_quadratic_has_no_lack_of_fit_and_certain_terms():
    table, coded = _runs(lambda a, b: 10.3 + a + 0.5 * b - 2 * a * a - 3 * b * b + a * b, ["u", "v"])
    result = surface(table, coded, ["u", "v"], CODING)
    assert (result["lack_of_fit"]["F"], result["lack_of_fit"]["p"]) == (0.0, 1.0)
    assert all(c["p"] == 0.0 for c in result["coefficients"].values())
    assert result["kind"] == "maximum"
    assert [result["stationary_coded"][k] for k in "uv"] == pytest.approx([6.5 / 23, 3 / 23])
    tests = factor_tests(result["_fit"][0], 2)
    assert [(F, p) for F, p, _, _ in tests["factors"]] == [(float("inf"), 0.0)] * 2
    assert tests["interactions"][(0, 1)][2] == 0.0


def test_a_factor_with_no_effect_has_p_one():
    table, coded = _runs(lambda a, b, c: 10.3 + a - 2 * a * a - 3 * b * b + 0.7 * a * b, ["u", "v", "w"])
    result = surface(table, coded, ["u", "v", "w"], CODING)
    coefficients = result["coefficients"]
    for term in ("w", "w^2", "u*w", "v*w", "v"):
        assert coefficients[term]["estimate"] == 0.0 and coefficients[term]["p"] == 1.0, term
    tests = factor_tests(result["_fit"][0], 3)
    assert tests["factors"][2][:2] == (0.0, 1.0)  # w: all its terms zero
    assert tests["interactions"][(0, 2)][1:3] == (0.0, 1.0)
    assert (result["lack_of_fit"]["F"], result["lack_of_fit"]["p"]) == (0.0, 1.0)
