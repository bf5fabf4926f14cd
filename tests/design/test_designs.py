"""Conformance and quality tests of the design algorithms (xdoe.design)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xdoe.design import (
    Design,
    Factor,
    centred_l2_discrepancy,
    full_factorial,
    latin_hypercube,
    make_design,
    maximin,
    min_distance,
)
from xdoe.errors import DesignError, InputError

DESIGNS = {"lhs": latin_hypercube, "maximin": maximin}  # the conformance of all twelve: test_methods.py
RANDOM = ["lhs", "maximin"]


def cat(name: str, k: int) -> Factor:
    return Factor(name, levels=tuple(f"{name}{i}" for i in range(k)))


def cont(name: str, **kw) -> Factor:
    return Factor(name, low=kw.pop("low", 0.0), high=kw.pop("high", 1.0), **kw)


CATEGORICAL = [cat("a", 3), cat("b", 4), cat("c", 2)]  # full factorial: 24 points
MIXED = [cat("a", 3), cont("x"), cat("b", 5), cont("y", low=1e-3, high=1.0, scale="log")]


def unit_of(factors, points):
    return Design(tuple(factors), "x", "x", points).unit()


def counts(points, j, k):
    return np.bincount(points[:, j].astype(int), minlength=k)


# ---------------------------------------------------------------- conformance


@pytest.mark.parametrize("name", RANDOM)
@pytest.mark.parametrize("factors", [CATEGORICAL, MIXED], ids=["categorical", "mixed"])
def test_different_seeds_differ(name, factors):
    fn = DESIGNS[name]
    arrays = [fn(factors, {"n": 12}, s).points for s in range(3)]
    assert not all(np.array_equal(arrays[0], other) for other in arrays[1:])


@pytest.mark.parametrize("name", RANDOM)
@pytest.mark.parametrize("n", [1, 2, 5, 7, 12, 23])
def test_levels_balanced_and_used(name, n):
    points = DESIGNS[name](CATEGORICAL, {"n": n}, 3).points
    assert points.shape == (n, 3)
    for j, f in enumerate(CATEGORICAL):
        col = points[:, j]
        assert np.array_equal(col, np.rint(col))
        c = counts(points, j, len(f.levels))
        assert c.max() - c.min() <= 1, (f.name, c)
        if n >= len(f.levels):
            assert (c > 0).all()


@pytest.mark.parametrize("name", RANDOM)
@pytest.mark.parametrize("n", [1, 3, 16, 40])
def test_mixed_columns(name, n):
    points = DESIGNS[name](MIXED, {"n": n}, 11).points
    assert points.shape == (n, len(MIXED))
    for j, f in enumerate(MIXED):
        col = points[:, j]
        if f.kind == "continuous":
            assert ((col >= 0) & (col <= 1)).all()
            cells = np.floor(col * n).astype(int)
            assert sorted(cells.tolist()) == list(range(n)), "one point per LHS cell"
        else:
            c = counts(points, j, len(f.levels))
            assert c.max() - c.min() <= 1
            if n >= len(f.levels):
                assert (c > 0).all()


def test_maximin_continuous_at_cell_centres():
    points = maximin([cont("x"), cont("y"), cont("z")], {"n": 9}, 0).points
    assert np.allclose(np.sort(points, axis=0), ((np.arange(9) + 0.5) / 9)[:, None])


@pytest.mark.parametrize("name", RANDOM)
def test_categorical_points_distinct_for_maximin_and_every_design_works_with_one_level(name):
    factors = [cat("a", 1), cat("b", 3)]
    points = DESIGNS[name](factors, {"n": 3}, 0).points
    assert (points[:, 0] == 0).all()
    assert sorted(points[:, 1].tolist()) == [0, 1, 2]


def test_full_factorial_order_and_refusal():
    points = full_factorial([cat("a", 2), cat("b", 3)], None, 0).points
    assert points.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert full_factorial([]).points.shape == (1, 0)
    with pytest.raises(DesignError, match="'x'"):
        full_factorial([cat("a", 2), cont("x")])


def test_maximin_distinct_points_and_too_many():
    points = maximin(CATEGORICAL, {"n": 20}, 5).points
    assert len(np.unique(points, axis=0)) == 20
    assert np.array_equal(maximin(CATEGORICAL, {"n": 24}, 5).points, full_factorial(CATEGORICAL).points)
    with pytest.raises(DesignError, match="25"):
        maximin(CATEGORICAL, {"n": 25}, 0).points


@pytest.mark.parametrize("name", RANDOM)
def test_bad_n_and_seed(name):
    with pytest.raises(DesignError):
        DESIGNS[name](CATEGORICAL, {"n": 0}, 0).points
    with pytest.raises(DesignError):
        DESIGNS[name](CATEGORICAL, {"n": 3}, -1).points


@settings(max_examples=25, deadline=None)
@given(
    ks=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    n_cont=st.integers(0, 2),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(RANDOM),
)
def test_property_balance_and_ranges(ks, n_cont, n, seed, name):
    factors = [cat(f"c{i}", k) for i, k in enumerate(ks)] + [cont(f"x{i}") for i in range(n_cont)]
    size = math.prod(ks)
    if name == "maximin" and n_cont == 0 and n > size:
        with pytest.raises(DesignError):
            maximin(factors, {"n": n}, seed).points
        return
    points = DESIGNS[name](factors, {"n": n}, seed).points
    assert points.shape == (n, len(factors))
    for j, f in enumerate(factors):
        if f.levels is not None:
            c = counts(points, j, len(f.levels))
            assert c.sum() == n and c.max() - c.min() <= 1
        else:
            assert sorted(np.floor(points[:, j] * n).astype(int).tolist()) == list(range(n))
    if name == "maximin" and n_cont == 0:
        assert len(np.unique(points, axis=0)) == n
    design = Design(tuple(factors), name, "test", points)
    for i in range(n):
        values = design.values(i)
        assert list(values) == [f.name for f in factors]


# ---------------------------------------------------------------- quality


def test_maximin_categorical_quality_4_pow_4():
    factors = [cat(n, 4) for n in "abcd"]
    points = maximin(factors, {"n": 16}, 0).points
    u = unit_of(factors, points)
    # 16 of 256 points: an orthogonal-array-like set reaches 2/3; random
    # subsets and plain greedy stay at or below 1/3
    assert min_distance(u) >= 0.57
    for j in range(4):
        assert counts(points, j, 4).tolist() == [4, 4, 4, 4]


def test_maximin_categorical_beats_random_subsets():
    factors = [cat(n, 4) for n in "abcde"]
    rng = np.random.default_rng(0)
    grid = full_factorial(factors).points
    random_best = max(
        min_distance(unit_of(factors, grid[rng.choice(len(grid), 40, replace=False)])) for _ in range(20)
    )
    ours = min_distance(unit_of(factors, maximin(factors, {"n": 40}, 1).points))
    assert ours > random_best
    assert ours >= 0.57


def test_ese_improves_on_plain_lhs():
    factors = [cont(f"x{i}") for i in range(4)]
    n = 30
    ese = [min_distance(maximin(factors, {"n": n}, s).points) for s in range(3)]
    lhs = [min_distance(latin_hypercube(factors, {"n": n}, s).points) for s in range(3)]
    assert min(ese) > max(lhs)
    # best known cell-centred maximin LHS n=30, d=4 is about 0.40 (spacefillingdesigns.nl); demand 85 %
    assert min(ese) >= 0.85 * 0.40


def test_ese_small_reaches_best_known():
    points = maximin([cont("x"), cont("y")], {"n": 20}, 0).points
    assert min_distance(points) >= 0.9 * 0.2121


# ---------------------------------------------------------------- Factor


def test_factor_value_mapping():
    assert Factor("a", levels=("x", 2, [1, 2], {"k": 1})).value(2) == [1, 2]
    lin = Factor("l", low=-1, high=3)
    assert lin.kind == "continuous"
    assert lin.value(0.0) == -1.0 and lin.value(1.0) == 3.0 and lin.value(0.25) == 0.0
    log = Factor("g", low=0.01, high=1.0, scale="log")
    assert log.value(0.5) == pytest.approx(0.1)
    assert log.value(0.0) == pytest.approx(0.01) and log.value(1.0) == pytest.approx(1.0)
    whole = Factor("i", low=1, high=10, integer=True)
    assert whole.value(0.0) == 1 and whole.value(1.0) == 10 and isinstance(whole.value(0.5), int)
    assert whole.value(0.5) == 6  # 1 + 0.5 * 9 = 5.5, rounded half to even
    log_int = Factor("j", low=1, high=1000, scale="log", integer=True)
    assert log_int.value(1 / 3) == 10
    level = Factor("c", levels=(1.5, "b"))
    assert level.kind == "categorical" and level.value(0.0) == 1.5
    assert type(Factor("n", levels=(np.int64(3),)).value(0)) is int
    with pytest.raises(DesignError):
        level.value(2)
    with pytest.raises(DesignError):
        level.value(0.5)
    with pytest.raises(DesignError):
        lin.value(1.5)


def test_factor_levels_are_not_shared():
    f = Factor("a", levels=([1, 2],))
    f.value(0).append(3)
    assert f.value(0) == [1, 2]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"levels": ()}, "empty"),
        ({"levels": (1,), "low": 0, "high": 1}, "not both"),
        ({}, "levels or a range"),
        ({"low": 1, "high": 1}, "low < high"),
        ({"low": 2, "high": 1}, "low < high"),
        ({"low": 0, "high": 1, "scale": "log"}, "low > 0"),
        ({"low": 0, "high": 1, "scale": "cubic"}, "scale"),
        ({"low": 0.2, "high": 0.8, "integer": True}, "no integer"),
        ({"low": 0, "high": float("inf")}, "finite"),
        ({"levels": "abc"}, "list"),
        ({"levels": (1, 2), "integer": True}, "integer"),
    ],
)
def test_factor_validation(kwargs, message):
    with pytest.raises(DesignError, match=message):
        Factor("f", **kwargs)


def test_design_errors_are_input_errors():
    assert issubclass(DesignError, InputError)
    with pytest.raises(DesignError):
        Factor("", levels=(1,))


# ---------------------------------------------------------------- Design


def test_design_unit_values_metrics():
    factors = (cat("a", 3), cat("one", 1), cont("x", low=10, high=20))
    design = Design(factors, "lhs", "because", np.array([[0, 0, 0.0], [2, 0, 0.5], [1, 0, 1.0]]))
    assert len(design) == 3
    assert design.unit().tolist() == [[0, 0.5, 0], [1, 0.5, 0.5], [0.5, 0.5, 1]]
    assert design.values(1) == {"a": "a2", "one": "one0", "x": 15.0}
    assert all(type(v) in (str, float) for v in design.values(1).values())
    assert design.min_distance == pytest.approx(math.sqrt(0.5))
    assert design.discrepancy == pytest.approx(centred_l2_discrepancy(design.unit()))
    assert not design.points.flags.writeable
    with pytest.raises(DesignError):
        Design(factors, "lhs", "x", np.array([[3, 0, 0.0]]))
    with pytest.raises(DesignError):
        Design(factors, "lhs", "x", np.array([[0, 0, 1.5]]))
    with pytest.raises(DesignError):
        Design(factors, "lhs", "x", np.zeros((2, 2)))


def test_metrics_edge_cases():
    assert min_distance(np.zeros((1, 3))) == math.inf
    assert min_distance(np.zeros((0, 3))) == math.inf
    assert min_distance(np.zeros((3, 0))) == 0.0
    assert math.isnan(centred_l2_discrepancy(np.zeros((0, 2))))
    assert min_distance(np.array([[0, 0], [3 / 5, 4 / 5]])) == pytest.approx(1.0)


# ---------------------------------------------------------------- make_design


def test_auto_full_factorial_when_it_fits():
    for budget in (None, -1, 24, 100):
        design = make_design(CATEGORICAL, max_runs=budget)
        assert design.method == "full_factorial" and len(design) == 24
        assert "24" in design.reason
    assert np.array_equal(make_design(CATEGORICAL).points, full_factorial(CATEGORICAL).points)


def test_auto_maximin_when_too_big():
    design = make_design(CATEGORICAL, max_runs=10, seed=3)
    assert design.method == "maximin" and len(design) == 10
    assert "24" in design.reason and "max_runs 10" in design.reason
    assert np.array_equal(design.points, maximin(CATEGORICAL, {"n": 10}, np.random.SeedSequence(3)).points)


def test_auto_continuous_needs_max_runs():
    with pytest.raises(DesignError, match="max_runs") as err:
        make_design(MIXED)
    assert "'x'" in str(err.value)
    design = make_design(MIXED, max_runs=8, seed=1)
    assert design.method == "maximin" and len(design) == 8 and "x" in design.reason


def test_explicit_methods():
    with pytest.raises(DesignError, match="'x'"):
        make_design(MIXED, method="full_factorial", max_runs=100)
    with pytest.raises(DesignError, match="maximin"):
        make_design(CATEGORICAL, method="full_factorial", max_runs=10)
    full = make_design(CATEGORICAL, method="full_factorial")
    assert full.method == "full_factorial" and len(full) == 24
    for method in ("lhs", "maximin"):
        small = make_design(CATEGORICAL, method=method, max_runs=7, seed=2)
        assert small.method == method and len(small) == 7 and method in small.reason
        capped = make_design(CATEGORICAL, method=method, max_runs=50)
        assert capped.method == "full_factorial" and len(capped) == 24
        assert "full factorial" in capped.reason
        mixed = make_design(MIXED, method=method, max_runs=9)
        assert mixed.method == method and len(mixed) == 9
        with pytest.raises(DesignError, match="max_runs"):
            make_design(MIXED, method=method)
    with pytest.raises(DesignError, match="unknown design method"):
        make_design(CATEGORICAL, method="simplex")


@pytest.mark.parametrize("budget", [0, -2, 2.5, True, "10"])
def test_bad_max_runs(budget):
    with pytest.raises(DesignError, match="max_runs"):
        make_design(CATEGORICAL, max_runs=budget)


def test_no_factors_and_duplicates():
    for method in ("auto", "full_factorial", "lhs", "maximin"):
        design = make_design([], method=method, max_runs=5)
        assert len(design) == 1 and design.points.shape == (1, 0) and design.values(0) == {}
    with pytest.raises(DesignError, match="twice"):
        make_design([cat("a", 2), cat("a", 3)])


def test_make_design_reproducible_and_max_runs_respected():
    for budget in (1, 5, 23):
        a = make_design(MIXED, max_runs=budget, seed=np.random.SeedSequence(9))
        b = make_design(MIXED, max_runs=budget, seed=9)
        assert np.array_equal(a.points, b.points)
        assert len(a) <= budget


def test_balanced_columns_fallback():
    from xdoe.design._maximin import _balanced_columns_maximin

    ks = np.array([3, 3, 3, 2])
    points = _balanced_columns_maximin(ks, 12, np.random.default_rng(0))
    assert len(np.unique(points, axis=0)) == 12
    for j, k in enumerate(ks):
        assert np.bincount(points[:, j], minlength=k).tolist() == [12 // k] * k


def test_full_factorial_rows_without_the_array():
    # Design.grid (xgen check without numpy): rows, values and length computed
    # without building points; the array, once built, is the full factorial's
    factors = (cat("a", 3), Factor("b", levels=(1, [2], {"c": 3})), cat("c", 2))
    lazy = make_design(factors)
    eager = Design(factors, "full_factorial", "x", full_factorial(factors).points)
    assert len(lazy) == len(eager) == 18
    for i in [*range(18), -1, -18]:
        assert lazy.row(i) == eager.row(i)
        assert lazy.values(i) == eager.values(i)
    for i in (18, -19):
        with pytest.raises(IndexError):
            lazy.row(i)
        with pytest.raises(IndexError):
            lazy.indices(i)
    assert [lazy.indices(i) for i in range(18)] == eager.points.astype(int).tolist()
    assert lazy.indices(-1) == [2, 2, 1]
    with pytest.raises(ValueError, match="grid"):
        eager.indices(0)
    assert "points" not in vars(lazy)
    copy = pickle.loads(pickle.dumps(lazy))
    assert np.array_equal(lazy.points, eager.points) and not lazy.points.flags.writeable
    assert lazy.active.all() and lazy.active.shape == (18, 3) and not lazy.active.flags.writeable
    assert lazy.row(-1) == eager.row(-1)  # now from the array
    assert (lazy.min_distance, lazy.discrepancy) == (eager.min_distance, eager.discrepancy)
    assert len(copy) == 18 and np.array_equal(copy.points, eager.points)
    with pytest.raises(AttributeError):
        lazy.nothing
    with pytest.raises(DesignError, match="continuous"):
        Design.grid(MIXED, "full_factorial", "x")


def test_seed_with_spawn_key_and_bad_seed_without_drawing():
    a = make_design(MIXED, max_runs=8, seed=4, spawn_key=(0,))
    b = make_design(MIXED, max_runs=8, seed=np.random.SeedSequence(4, spawn_key=(0,)))
    assert np.array_equal(a.points, b.points)
    assert not np.array_equal(a.points, make_design(MIXED, max_runs=8, seed=4).points)
    for seed in (-1, 1.5, True, "3"):
        with pytest.raises(DesignError, match="seed"):
            make_design(CATEGORICAL, seed=seed)


# ------------------------------------------- conformance: design: mappings (issue 24)

TWO_LEVEL_MIXED = [Factor("a", levels=("p", "q")), Factor("b", levels=(1, 2)), cont("x"), cont("y", low=1.0, high=2.0)]
DOE_SPECS = {
    "fractional_factorial": ({"method": "fractional_factorial", "resolution": 3}, TWO_LEVEL_MIXED),
    "plackett_burman": ({"method": "plackett_burman"}, TWO_LEVEL_MIXED),
    "central_composite": ({"method": "central_composite", "center": 2}, [cont("x"), cont("y")]),
    "box_behnken": ({"method": "box_behnken", "center": 1}, [cont("x"), cont("y"), cont("z")]),
    "sobol": ({"method": "sobol", "n": 16}, [cat("a", 3), cont("x"), cat("b", 2)]),
    "halton": ({"method": "halton", "n": 10}, [cat("a", 3), cont("x"), cat("b", 2)]),
    "d_optimal": ({"method": "d_optimal", "runs": 11, "model": "interactions"}, [cat("a", 3), cont("x"), cat("b", 2)]),
    "morris": ({"method": "morris", "trajectories": 4}, [cont("x"), cont("y")]),
    "saltelli": ({"method": "saltelli", "n": 8}, [cont("x"), cont("y")]),
}


@pytest.mark.parametrize("name", list(DOE_SPECS))
def test_doe_every_level_used_balanced_within_one_and_max_runs_kept(name):
    if name in ("morris", "saltelli"):
        pytest.importorskip("SALib")
    spec, factors = DOE_SPECS[name]
    design = make_design(factors, method=spec, seed=3)
    for j, f in enumerate(design.factors):
        if f.levels is not None:
            counts = np.bincount(design.points[:, j].astype(int), minlength=len(f.levels))
            assert counts.min() > 0
            if name != "d_optimal":  # D-optimality, not balance, decides its points
                assert counts.max() - counts.min() <= 1
    bare = {k: v for k, v in spec.items() if k not in ("n", "runs")}
    if name in ("sobol", "halton", "d_optimal"):  # the size comes from n / runs, else max_runs
        assert len(make_design(factors, method=bare, max_runs=len(design), seed=3)) == len(design)
        with pytest.raises(DesignError, match="max_runs"):
            make_design(factors, method=bare, seed=3)
    else:  # a fixed size: refused when larger than max_runs
        with pytest.raises(DesignError, match=f"max_runs {len(design) - 1}"):
            make_design(factors, method=spec, max_runs=len(design) - 1, seed=3)
