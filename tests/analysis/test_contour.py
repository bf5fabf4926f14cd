"""The contour plot tells the truth (issue 32 item 7): colours only over the
design region (the convex hull of the design points), the colour scale the
fitted response's range there, the rest hatched as extrapolation, the
stationary point with its confidence and prediction intervals, marked as
extrapolation outside the region. Known quadratics on a rotatable central
composite design (tests/analysis/test_surface.py's ``_runs``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.contour import ContourSet
from matplotlib.patches import PathPatch

import xdoe.analysis._figure as figure
from test_surface import CODING, _runs
from xdoe.analysis._surface import _region_slice, plot_contour, surface
from xdoe.design import Factor, make_design

OUTSIDE = "outside the design region: extrapolation"


def _draw(monkeypatch: pytest.MonkeyPatch, result: dict, coded: pd.DataFrame, path: Path) -> Any:
    """Draw the contour plot to ``path``; the figure it saved."""
    drawn = []
    save = figure.save

    def keep(fig: Any, target: Any) -> Path:
        drawn.append(fig)
        return save(fig, target)

    monkeypatch.setattr(figure, "save", keep)
    assert plot_contour(result, coded, ["u", "v"], CODING, path, title="known truth") == path
    assert path.is_file() and path.stat().st_size > 10_000
    return drawn[0]


def _legend(fig: Any) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_colour_scale_is_the_fitted_range_over_the_region(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # concave, no noise: the fit is the truth; its maximum (5 at coded (0.3, -0.2)) lies inside the
    # octagon of the design points and its minimum over that octagon at one of its corners
    def truth(a: Any, b: Any) -> Any:
        return 5 - (a - 0.3) ** 2 - 2 * (b + 0.2) ** 2 + 0.5 * (a - 0.3) * (b + 0.2)

    table, coded = _runs(truth)
    result = surface(table, coded, ["u", "v"], CODING)
    assert result["kind"] == "maximum" and result["inside"] is True
    fig = _draw(monkeypatch, result, coded, tmp_path / "max.png")
    ax = fig.axes[0]
    filled = [c for c in ax.collections if isinstance(c, ContourSet) and c.filled]
    assert len(filled) == 1
    levels = filled[0].levels
    points = coded[["u", "v"]].to_numpy()
    low, high = float(truth(*points.T).min()), 5.0
    assert levels[0] == pytest.approx(low, abs=1e-9) and levels[-1] == pytest.approx(high, abs=1e-9)
    assert fig.axes[1].get_ylim() == pytest.approx((low, high), abs=1e-9)  # the colour bar
    alpha = np.abs(points).max()
    corners = [truth(su * alpha, sv * alpha) for su in (-1, 1) for sv in (-1, 1)]
    assert min(corners) < low - 3.5  # the bounding box's corners, never run, stretched the old scale
    # outside the region: grey and hatched, labelled as extrapolation
    hatched = [pa for pa in ax.patches if isinstance(pa, PathPatch) and pa.get_hatch()]
    assert len(hatched) == 1 and hatched[0].get_facecolor()[:3] == pytest.approx((0.87, 0.87, 0.87))
    texts = _legend(fig)
    assert "outside the design region: extrapolation (not coloured)" in texts
    star = next(t for t in texts if t.startswith("stationary point (maximum)"))
    ci = result["predicted_ci"]
    assert f"95 % CI of the mean [{ci[0]:.4g}, {ci[1]:.4g}]" in star and "95 % PI of a new run" in star
    assert OUTSIDE not in star


def test_stationary_point_outside_the_region_is_extrapolation(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    # a saddle at coded (1.2, 0.8): inside the bounding box of the design points (to 1.414) but
    # outside their octagon, whose edge from (1, 1) to (1.414, 0) passes below v = 0.52 at u = 1.2
    table, coded = _runs(lambda a, b: (a - 1.2) ** 2 - (b - 0.8) ** 2, noise=0.05, seed=3)
    result = surface(table, coded, ["u", "v"], CODING)
    assert result["kind"] == "saddle"
    assert [result["stationary_coded"][k] for k in "uv"] == pytest.approx([1.2, 0.8], abs=0.1)
    ci, pi = result["predicted_ci"], result["predicted_pi"]
    assert pi[0] < ci[0] < result["predicted"] < ci[1] < pi[1]  # a new run varies more than the mean
    fig = _draw(monkeypatch, result, coded, tmp_path / "saddle.png")
    label = next(t for t in _legend(fig) if t.startswith("stationary point"))
    assert label.startswith(f"stationary point (saddle) {OUTSIDE}")
    assert f"95 % PI of a new run [{pi[0]:.4g}, {pi[1]:.4g}]" in label
    marker = next(c for c in fig.axes[0].collections if c.get_label() == label)
    assert marker.get_facecolor()[0][:3] == pytest.approx((1.0, 1.0, 1.0))  # the hollow X, not the star


def test_predicted_pi_is_statsmodels_prediction_interval() -> None:
    import statsmodels.api as sm

    table, coded = _runs(lambda a, b: 1 - a * a - 0.5 * b * b, noise=0.1, seed=5)
    result = surface(table, coded, ["u", "v"], CODING)
    u, v = coded["u"].to_numpy(), coded["v"].to_numpy()
    x = sm.add_constant(np.column_stack([u, v, u * u, v * v, u * v]))
    fit = sm.OLS(table["y"].to_numpy(), x).fit()
    a, b = (result["stationary_coded"][k] for k in "uv")
    frame = fit.get_prediction(np.array([[1, a, b, a * a, b * b, a * b]])).summary_frame(alpha=0.05)
    assert result["predicted_pi"] == pytest.approx([frame["obs_ci_lower"][0], frame["obs_ci_upper"][0]])


def _area(polygon: np.ndarray) -> float:
    x, y = polygon.T
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))  # > 0: counter-clockwise


def test_region_of_three_factors_is_the_hull_sliced_through_the_plane() -> None:
    # Box-Behnken, three factors: the hull is the cuboctahedron |x_i| <= 1, |x1| + |x2| + |x3| <= 2
    design = make_design([Factor(n, low=0, high=1) for n in "abc"], method={"method": "box_behnken"})
    points = np.asarray(design.coded(), dtype=float)
    assert _area(_region_slice(points, np.zeros(3), 0, 1)) == pytest.approx(4.0)  # the square at c = 0
    cut = _region_slice(points, np.array([0.0, 0.0, 0.5]), 0, 1)  # corners cut where |a| + |b| > 1.5
    assert _area(cut) == pytest.approx(4.0 - 4 * 0.125)
    assert np.abs(cut).sum(axis=1).max() == pytest.approx(1.5)
