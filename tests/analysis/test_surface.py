"""Response-surface analysis: canonical analysis against known quadratics,
lack of fit, predicted response."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xdoe.analysis._surface import canonical, surface
from xdoe.design import Factor, make_design

CODING = {"u": {"minus": 10.0, "plus": 20.0, "scale": "linear"}, "v": {"minus": 1e-3, "plus": 1e-1, "scale": "log"}}


def _runs(f, noise=0.0, center=4, seed=0):
    design = make_design([Factor("u", low=10, high=20), Factor("v", low=1e-3, high=1e-1, scale="log")],
                         method={"method": "central_composite", "center": center})
    coded = pd.DataFrame(design.coded(), columns=["u", "v"])
    rng = np.random.default_rng(seed)
    y = np.array([f(*row) for row in coded.to_numpy()]) + noise * rng.standard_normal(len(coded))
    table = pd.DataFrame({"y": y, "design_point": range(len(y))})
    return table, coded


@pytest.mark.parametrize("f,kind,point", [
    (lambda a, b: 5 - (a - 0.3) ** 2 - 2 * (b + 0.2) ** 2, "maximum", (0.3, -0.2)),
    (lambda a, b: 5 + (a - 0.5) ** 2 + 0.5 * (b - 0.1) ** 2 + 0.2 * (a - 0.5) * (b - 0.1), "minimum", (0.5, 0.1)),
    (lambda a, b: (a - 0.2) ** 2 - (b - 0.4) ** 2, "saddle", (0.2, 0.4)),
])
def test_canonical_analysis_of_a_known_quadratic(f, kind, point):
    table, coded = _runs(f)
    result = surface(table, coded, ["u", "v"], CODING)
    assert result["kind"] == kind
    assert [result["stationary_coded"][k] for k in "uv"] == pytest.approx(point, abs=1e-9)
    # natural units: u linear on [10, 20], v log on [1e-3, 1e-1]
    assert result["stationary_point"]["u"] == pytest.approx(15 + 5 * point[0])
    assert result["stationary_point"]["v"] == pytest.approx(10 ** (-2 + point[1]))
    assert result["predicted"] == pytest.approx(f(*point), abs=1e-9)
    assert result["inside"] is True


def test_canonical_by_hand():
    out = canonical(np.array([2.0, -1.0]), np.array([-1.0, -2.0]), {(0, 1): 1.0})
    big = np.array([[-1.0, 0.5], [0.5, -2.0]])
    assert out["point"] == pytest.approx(-0.5 * np.linalg.solve(big, [2.0, -1.0]))
    assert out["kind"] == "maximum" and out["eigenvalues"] == pytest.approx(np.linalg.eigvalsh(big))


def test_outside_and_lack_of_fit():
    table, coded = _runs(lambda a, b: 3 * a - (a - 4) ** 2 * 0 - 0.1 * a * a - b * b + 0.3 * np.cos(3 * a),
                         noise=0.01, center=5)
    result = surface(table, coded, ["u", "v"], CODING)
    assert result["inside"] is False  # the maximum in a is at 15 coded units
    lof = result["lack_of_fit"]
    assert lof is not None and lof["df"] == [3.0, 4.0] and lof["p"] < 0.01  # the cosine is not quadratic
    good = surface(*_runs(lambda a, b: 1 - a * a - b * b, noise=0.01, center=5), ["u", "v"], CODING)
    assert good["lack_of_fit"]["p"] > 0.05
