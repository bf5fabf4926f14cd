"""Box-Behnken designs against Box & Behnken (1960), Technometrics 2,
455-475 (also NIST/SEMATECH e-Handbook 5.3.3.6.2; Myers, Montgomery &
Anderson-Cook, Response Surface Methodology, Table 7.6)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from xdoe.design import Factor, make_design
from xdoe.design._diagnostics import d_efficiency, model_matrix
from xdoe.errors import DesignError

# Box & Behnken 1960: points without the centre points, for 3 to 7 factors
PUBLISHED_POINTS = {3: 12, 4: 24, 5: 40, 6: 48, 7: 56}


def cont(k: int) -> list[Factor]:
    return [Factor(f"x{i + 1}", low=0.0, high=10.0) for i in range(k)]


def quadratic_d_efficiency(coded: np.ndarray) -> float:
    k = coded.shape[1]
    x, _ = model_matrix(coded, [f"x{i}" for i in range(k)], [0] * k, "quadratic")
    return d_efficiency(x)


@pytest.mark.parametrize("k", sorted(PUBLISHED_POINTS))
def test_sizes_levels_and_balance_match_the_published_designs(k):
    design = make_design(cont(k), method={"method": "box_behnken", "center": 3})
    coded = design.coded()
    assert len(design) == PUBLISHED_POINTS[k] + 3
    assert not coded[-3:].any() and np.abs(coded[:-3]).sum(axis=1).min() > 0  # centre points last
    for j in range(k):
        col = coded[:, j]
        assert set(np.unique(col)) == {-1.0, 0.0, 1.0}
        assert (col == 1).sum() == (col == -1).sum()  # every factor balanced
    # every factor at +-1 equally often: the same sum of x^4 for every factor
    assert len({(coded[:, j] ** 4).sum() for j in range(k)}) == 1
    assert quadratic_d_efficiency(coded) > 0  # the full quadratic model is estimable


@pytest.mark.parametrize("k", [4, 7])
def test_four_and_seven_factors_are_rotatable(k):
    # Box & Behnken 1960: rotatable for k = 4 and 7 ([iiii] = 3 [iijj] for every pair)
    coded = make_design(cont(k), method={"method": "box_behnken"}).coded()
    for i, j in itertools.combinations(range(k), 2):
        assert (coded[:, i] ** 4).sum() == 3 * (coded[:, i] ** 2 * coded[:, j] ** 2).sum()


def test_seven_factors_vary_every_pair_together_in_one_block_of_eight():
    # the seven blocks of three factors are the lines of the Fano plane (a BIBD, lambda = 1)
    coded = make_design(cont(7), method={"method": "box_behnken", "center": 0}).coded()
    assert len(coded) == 56 and set((coded != 0).sum(axis=1)) == {3}
    for i, j in itertools.combinations(range(7), 2):
        assert ((coded[:, i] != 0) & (coded[:, j] != 0)).sum() == 8


def test_six_factors_are_six_blocks_of_three_each_factor_in_three():
    coded = make_design(cont(6), method={"method": "box_behnken", "center": 0}).coded()
    assert len(coded) == 48 and set((coded != 0).sum(axis=1)) == {3}
    assert ((coded != 0).sum(axis=0) == 24).all()
    blocks = {tuple(np.flatnonzero(row) + 1) for row in coded}
    # Myers, Montgomery & Anderson-Cook Table 7.6
    assert blocks == {(1, 2, 4), (2, 3, 5), (3, 4, 6), (1, 4, 5), (2, 5, 6), (1, 3, 6)}


@pytest.mark.parametrize("k", [6, 7])
def test_fewer_runs_and_a_higher_d_efficiency_than_the_pairs_design(k):
    import pydoe

    ours = make_design(cont(k), method={"method": "box_behnken", "center": 3}).coded()
    pairs = np.asarray(pydoe.bbdesign(k, center=3), float)
    assert len(ours) < len(pairs)
    assert quadratic_d_efficiency(ours) > quadratic_d_efficiency(pairs)


def test_no_centre_points_with_center_zero_and_the_same_design_whatever_the_seed():
    a = make_design(cont(4), method={"method": "box_behnken", "center": 0}, seed=1)
    b = make_design(cont(4), method={"method": "box_behnken", "center": 0}, seed=2)
    assert len(a) == 24 and np.array_equal(a.coded(), b.coded())


@pytest.mark.parametrize("k", [2, 8, 9])
def test_other_numbers_of_factors_are_refused_naming_the_supported_ones(k):
    with pytest.raises(DesignError, match="3 to 7 continuous factors"):
        make_design(cont(k), method={"method": "box_behnken"})


# Box & Behnken 1960 (NIST/SEMATECH 5.3.3.6.3, runs of a Box-Behnken design): centre points of the
# published designs and their total runs: 15, 27, 46, 54, 62
PUBLISHED_CENTRES = {3: 3, 4: 3, 5: 6, 6: 6, 7: 6}


@pytest.mark.parametrize("k", sorted(PUBLISHED_CENTRES))
def test_without_center_the_published_centre_points_are_added(k):
    design = make_design(cont(k), method={"method": "box_behnken"})
    centres = int(np.sum(np.all(design.coded() == 0, axis=1)))
    assert centres == PUBLISHED_CENTRES[k]
    assert len(design) == {3: 15, 4: 27, 5: 46, 6: 54, 7: 62}[k]
    assert design.info["center"] == PUBLISHED_CENTRES[k]
