"""Morris and Sobol' indices through the design's own sample, against
SALib's Ishigami function (analytic Sobol' indices, Ishigami & Homma 1990)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("SALib")

from SALib.analyze import morris as salib_morris  # noqa: E402
from SALib.test_functions import Ishigami  # noqa: E402

from xdoe.analysis._sensitivity import sensitivity  # noqa: E402
from xdoe.design import Factor, make_design  # noqa: E402

FACTORS = [Factor(n, low=-np.pi, high=np.pi) for n in ("x1", "x2", "x3")]
PROBLEM = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-np.pi, np.pi]] * 3}


def _natural(design):
    return np.array([[design.values(i)[f.name] for f in FACTORS] for i in range(len(design))])


def test_saltelli_design_recovers_the_analytic_ishigami_indices():
    design = make_design(FACTORS, method={"method": "saltelli", "n": 1024}, seed=1)
    assert len(design) == 1024 * 5
    y = Ishigami.evaluate(_natural(design))
    rows = {r["name"]: r for r in sensitivity("saltelli", design.unit(), y, ["x1", "x2", "x3"], design.info)}
    s1 = {"x1": 0.3139, "x2": 0.4424, "x3": 0.0}
    st = {"x1": 0.5576, "x2": 0.4424, "x3": 0.2437}
    for name in s1:
        assert rows[name]["S1"] == pytest.approx(s1[name], abs=0.05)
        assert rows[name]["ST"] == pytest.approx(st[name], abs=0.05)
        assert rows[name]["S1_conf"] > 0


def test_morris_design_matches_salib_on_the_same_sample():
    design = make_design(FACTORS, method={"method": "morris", "trajectories": 20, "levels": 4}, seed=2)
    assert len(design) == 20 * 4
    x = _natural(design)
    y = Ishigami.evaluate(x)
    ours = {r["name"]: r for r in sensitivity("morris", design.unit(), y, ["x1", "x2", "x3"], design.info)}
    theirs = salib_morris.analyze(PROBLEM, x, y, num_levels=4)
    for i, name in enumerate(["x1", "x2", "x3"]):
        assert ours[name]["mu_star"] == pytest.approx(theirs["mu_star"][i])
        assert ours[name]["sigma"] == pytest.approx(theirs["sigma"][i])
    # x3 acts only through its interaction with x1: small mean effect, large spread
    assert abs(ours["x3"]["mu"]) < ours["x3"]["sigma"]
