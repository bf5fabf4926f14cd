"""Categorical maximin from Z_k-linear codes (xdoe.design._codes and the
code path of xdoe.design._maximin)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist

from xdoe.design import Design, Factor, maximin
from xdoe.design._codes import code_pools, code_rank, codewords, lattice_points, search_generator, squared_lee
from xdoe.design._common import factorial_indices
from xdoe.design._maximin_search import Pool, unit_levels


def factors_of(ks):
    return [Factor(f"f{i}", levels=tuple(range(k))) for i, k in enumerate(ks)]


def level_spread(points, ks):
    """Largest (max - min) level count over the factors."""
    return max(int(np.ptp(np.bincount(points[:, j].astype(int), minlength=k))) for j, k in enumerate(ks))


def min_dist(points, ks):
    return Design(tuple(factors_of(ks)), "maximin", "test", points).min_distance


# ---------------------------------------------------------------- the targets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_4_pow_6_n50_reaches_target(seed):
    ks = [4] * 6
    points = maximin(factors_of(ks), {"n": 50}, seed).points
    assert points.shape == (50, 6)
    assert len(np.unique(points, axis=0)) == 50
    assert level_spread(points, ks) <= 1
    # target 0.816 = sqrt(6)/3 (arsenAI: 0.667); 6 = squared-Lee weight of the code
    assert min_dist(points, ks) >= 0.816


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_4_pow_6_n200_reaches_target(seed):
    ks = [4] * 6
    points = maximin(factors_of(ks), {"n": 200}, seed).points
    assert len(np.unique(points, axis=0)) == 200
    assert level_spread(points, ks) <= 1
    d = min_dist(points, ks)
    assert d >= 0.577  # the target (arsenAI: 0.333)
    # Construction A over Z_2 with a [6, 2, 4] binary code: squared level distance >= 4
    assert d >= 2 / 3 - 1e-9


def test_10_pow_5_n100_from_a_z10_code():
    ks = [10] * 5
    points = maximin(factors_of(ks), {"n": 100}, 0).points
    assert level_spread(points, ks) == 0
    assert len(np.unique(points, axis=0)) == 100
    # a rank-2 Z_10 code of squared-Lee weight >= 18 (the general search reached 0.37-0.38)
    assert min_dist(points, ks) >= math.sqrt(18) / 9 - 1e-9


def test_same_seed_same_design_and_seeds_differ():
    factors = factors_of([4] * 6)
    a = maximin(factors, {"n": 50}, np.random.SeedSequence(5)).points
    b = maximin(factors, {"n": 50}, 5).points
    assert np.array_equal(a, b)
    others = [maximin(factors, {"n": 50}, s).points for s in (6, 7)]
    assert not all(np.array_equal(a, o) for o in others)


# ---------------------------------------------------------------- codes


def brute_min_weight(k, a):
    words = codewords(k, a)[1:]
    return int(squared_lee(k)[words].sum(axis=1).min())


def test_squared_lee_and_rank():
    assert squared_lee(4).tolist() == [0, 1, 4, 1]
    assert squared_lee(5).tolist() == [0, 1, 4, 4, 1]
    assert code_rank(4, 50) == 3 and code_rank(4, 64) == 3 and code_rank(4, 65) == 4
    assert code_rank(2, 1) == 0


@pytest.mark.parametrize("k, d, r, expected", [(4, 6, 3, 6), (4, 6, 4, 3), (3, 4, 2, 3), (2, 7, 4, 3)])
def test_search_generator_weight_is_true_and_good(k, d, r, expected):
    a, w = search_generator(k, d, r, np.random.default_rng(0), 200)
    assert a.shape == (r, d - r)
    assert w == brute_min_weight(k, a)
    assert w >= expected  # (2, 7, 4): the Hamming code; (4, 6, 4): best systematic, by exhaustion


def test_every_coset_is_spread_and_balanced():
    k = 4
    a = np.array([[0, 1, 2], [2, 0, 3], [1, 2, 0]])  # the lead's example
    w = brute_min_weight(k, a)
    assert w == 6
    words = codewords(k, a)
    rng = np.random.default_rng(1)
    for _ in range(10):
        coset = lattice_points(np.array([k] * 6), k, words, rng.integers(0, k, size=6))
        assert len(np.unique(coset, axis=0)) == 64
        assert pdist(coset, "sqeuclidean").min() >= w
        for j in range(6):
            assert np.bincount(coset[:, j], minlength=k).tolist() == [16] * 4


def test_construction_a_over_z2_lifts_to_all_levels():
    ks = np.array([4] * 6)
    a, w = search_generator(2, 6, 2, np.random.default_rng(0), 100)
    assert w >= 4  # a [6, 2, 4] binary code
    points = lattice_points(ks, 2, codewords(2, a), np.array([1, 0, 1, 0, 0, 1]))
    assert points.shape == (256, 6) and len(np.unique(points, axis=0)) == 256
    assert pdist(points, "sqeuclidean").min() >= min(w, 4)
    for j in range(6):
        assert np.bincount(points[:, j], minlength=4).tolist() == [64] * 4


def test_code_pools_mixed_levels_share_a_divisor():
    ks = np.array([2, 4, 6])
    pools = code_pools(ks, 10, np.random.default_rng(0), 2048, 50, 4)
    assert len(pools) == 1  # q = 2 only
    (pool,) = pools
    assert len(pool) >= 10 and len(np.unique(pool, axis=0)) == len(pool)
    for j, k in enumerate(ks):
        c = np.bincount(pool[:, j], minlength=k)
        assert len(c) == k and (c == c[0]).all()
    assert code_pools(np.array([3, 4]), 5, np.random.default_rng(0), 2048, 50, 4) == []


def test_pool_may_hold_refuses_impossible_thresholds():
    ks = np.array([4] * 6)
    a = np.array([[0, 1, 2], [2, 0, 3], [1, 2, 0]])
    coset = codewords(4, a)
    pool = Pool(unit_levels(coset, ks), coset)
    six = 6 / 9
    assert pool.may_hold(50, six - 1e-9)  # every pair is at least that far
    assert pool.may_hold(64, -1.0)
    # at threshold 6 every codeword has a neighbour: 50 of 64 points cannot avoid all
    assert not pool.may_hold(50, six + 1e-9)
    # a 2 x 2 grid: two points at distance 1 (the diagonal) are possible, three are not
    square = factorial_indices([2, 2])
    small = Pool(square.astype(float), square)
    assert small.may_hold(2, 1.0)
    assert not small.may_hold(3, 1.0)


# ---------------------------------------------------------------- properties


@settings(max_examples=30, deadline=None)
@given(
    k=st.integers(2, 5),
    d=st.integers(2, 5),
    ones=st.integers(0, 1),
    n_frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_equal_levels_balanced_distinct(k, d, ones, n_frac, seed):
    ks = [k] * d + [1] * ones
    total = k**d
    n = 2 + int(n_frac * (min(total, 90) - 2))
    points = maximin(factors_of(ks), {"n": n}, seed).points
    assert points.shape == (n, len(ks))
    assert len(np.unique(points, axis=0)) == n
    assert level_spread(points, ks) <= 1
    assert (points[:, d:] == 0).all()
    assert np.array_equal(points, maximin(factors_of(ks), {"n": n}, seed).points)


@settings(max_examples=15, deadline=None)
@given(
    ks=st.sampled_from([(2, 4), (2, 4, 4), (3, 6, 3), (2, 2, 4, 6), (4, 2, 2, 2, 2)]),
    n_frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_common_divisor_levels_balanced_distinct(ks, n_frac, seed):
    total = math.prod(ks)
    n = 2 + int(n_frac * (min(total, 60) - 2))
    points = maximin(factors_of(ks), {"n": n}, seed).points
    assert len(np.unique(points, axis=0)) == n
    assert level_spread(points, ks) <= 1


def test_ternary_code_size_design():
    # 27 of 243 points: a coset of a rank-3 ternary code of Hamming distance 2
    # (no [5, 3, 3] ternary MDS code exists), squared level distance >= 2
    ks = [3] * 5
    points = maximin(factors_of(ks), {"n": 27}, 0).points
    assert level_spread(points, ks) == 0
    assert min_dist(points, ks) >= math.sqrt(2) / 2 - 1e-9
