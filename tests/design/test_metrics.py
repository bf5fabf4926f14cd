"""The closed-form figures of a full factorial equal scipy's general computation, and
are the very floats earlier manifests hold (manifest.json must not change)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xdoe.design import Design, Factor, centred_l2_discrepancy, full_factorial, make_design, min_distance
from xdoe.design._common import factorial_indices
from xdoe.design._metrics import factorial_discrepancy, factorial_figures, factorial_min_distance


@pytest.mark.parametrize("ks", [[2], [1, 3], [4, 4, 4], [2, 3, 5], [1, 1], [4] * 6, [7, 2]])
def test_factorial_figures_equal_the_general_computation(ks: list[int]) -> None:
    factors = [Factor(f"f{j}", levels=list(range(k))) for j, k in enumerate(ks)]
    design = make_design(factors, method="full_factorial")
    assert design._grid == ks  # noqa: SLF001 - the closed form is used
    unit = design.unit()
    expected_distance = min_distance(unit)
    distance, discrepancy = factorial_figures(ks)
    assert distance == (pytest.approx(expected_distance, rel=1e-12) if math.isfinite(expected_distance)
                        else math.inf)
    # scipy sums n^2 terms in double precision: at 4^6 points its value is off by
    # 7e-10 (relative) from a long-double computation, which the closed form matches to 2e-15
    assert discrepancy == pytest.approx(centred_l2_discrepancy(unit), rel=1e-8, abs=1e-15)
    assert (design.min_distance, design.discrepancy) == (distance, discrepancy)


def test_factorial_discrepancy_is_exact_where_scipy_rounds() -> None:
    assert factorial_figures([4] * 6)[1] == pytest.approx(0.15399899105225695864, rel=1e-14)


def test_other_point_sets_take_the_general_path() -> None:
    factors = [Factor("a", levels=[0, 1, 2]), Factor("b", levels=[0, 1])]
    shuffled = full_factorial(factors).points[::-1]  # the same points in another order
    design = Design(tuple(factors), "maximin", "test", shuffled)
    assert design._grid is None  # noqa: SLF001
    assert design.discrepancy == pytest.approx(factorial_figures([3, 2])[1], rel=1e-10)
    subset = Design(tuple(factors), "full_factorial", "test", factorial_indices([3, 2])[:4])
    assert subset._grid is None  # noqa: SLF001
    assert subset.min_distance == pytest.approx(min_distance(subset.unit()))
    with pytest.raises(ValueError):
        factorial_figures([])
    np.testing.assert_array_equal(full_factorial(factors).points, factorial_indices([3, 2]))


#: factorial_figures as main at aea22cf wrote them (plain-Python sums in numpy's order up to 128 levels)
PINNED = {(4, 4, 4, 4, 4, 4): (0.3333333333333333, 0.15399899105225456),
          (1, 5, 7, 13): (0.08333333333333333, 0.12197378239044876),
          (2, 200): (0.005025125628140704, 0.09033535734226672),
          (3, 3): (0.5, 0.060956790123457116),
          (2, 3, 5): (0.25, 0.148408564814815),
          tuple(range(1, 129)): (0.007874015748031496, 8686.31517619054)}


@pytest.mark.parametrize("ks", list(PINNED))
def test_factorial_figures_are_the_ones_manifests_hold(ks: tuple[int, ...]) -> None:
    # the column terms come from numpy itself now; manifest.json's figures must not change
    assert factorial_figures(ks) == PINNED[ks]


def test_figures_of_wide_columns_and_of_many_points() -> None:
    # the minimum distance never needs the sums
    assert factorial_min_distance([10**6]) == 1.0 / (10**6 - 1)  # O(d): no 10^6 x 10^6 terms
    assert factorial_min_distance([1, 1]) == math.inf
    assert factorial_figures([3, 130]) == (factorial_min_distance([3, 130]), factorial_discrepancy([3, 130]))
    for bad in ([], [0, 2]):
        with pytest.raises(ValueError):
            factorial_min_distance(bad)
        with pytest.raises(ValueError):
            factorial_discrepancy(bad)
