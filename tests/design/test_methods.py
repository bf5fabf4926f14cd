"""One conformance suite over the twelve design methods (issue 34): every
method is ``method(factors, spec=None, seed=0) -> Design``, exported from
:mod:`xdoe.design` and named by :data:`xdoe.design.METHODS`; for each, the
shape, the coded levels within range, the same design for the same seed
(int or ``SeedSequence``, options as a mapping or a ``DesignSpec``), a new
design for another seed where the method draws, balance where it promises
it, and the size or property of the published table it cites. The full
tables stay in their own tests (test_doe_designs.py, test_box_behnken.py,
test_catalogue.py)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import xdoe.design
from xdoe.design import (
    METHODS,
    SOURCES,
    Design,
    DesignSpec,
    Factor,
    design_method,
    make_design,
    parse_design,
)
from xdoe.documents import DESIGN_METHODS
from xdoe.errors import DesignError


def cat(name: str, k: int) -> Factor:
    return Factor(name, levels=tuple(f"{name}{i}" for i in range(k)))


def cont(name: str) -> Factor:
    return Factor(name, low=0.0, high=10.0)


def two(names: str) -> list[Factor]:
    return [Factor(n, levels=(-1, 1)) for n in names]


MIXED = [cat("a", 3), cont("x"), cat("b", 2), Factor("y", low=1e-3, high=1.0, scale="log")]


def orthogonal(design: Design) -> bool:
    coded = design.coded()
    return np.allclose(coded.T @ coded, len(design) * np.eye(coded.shape[1]))


def rotatable_alpha(design: Design) -> bool:
    # Box & Wilson 1951 / Montgomery 2012, 11.4.2: alpha = F^(1/4) of the F = 2^k cube points
    k = len(design.factors)
    return math.isclose(design.info["alpha_value"], (2 ** k) ** 0.25)


#: method -> (factors, options, number of points, draws from the seed, balanced, the published table's check)
CASES = {
    # every combination: 3 x 2 x 4 (Montgomery 2012, ch. 5)
    "full_factorial": ([cat("a", 3), cat("b", 2), cat("c", 4)], {}, 24, False, True, None),
    "lhs": (MIXED, {"n": 12}, 12, True, True, None),
    "maximin": (MIXED, {"n": 12}, 12, True, True, None),
    # NIST/SEMATECH 5.3.3.4.7: 5 factors at resolution III in 8 runs, orthogonal
    "fractional_factorial": (two("abcde"), {"resolution": 3}, 8, False, True, orthogonal),
    # Plackett & Burman 1946: 11 factors in 12 runs, orthogonal main effects
    "plackett_burman": (two("abcdefghijk"), {}, 12, False, True, orthogonal),
    # 2^2 cube + 4 axial + 4 centre points, rotatable alpha sqrt(2)
    "central_composite": ([cont("x"), cont("y")], {}, 12, False, False, rotatable_alpha),
    # Box & Behnken 1960: 3 factors, 12 edge midpoints + 3 centre points
    "box_behnken": ([cont("x"), cont("y"), cont("z")], {}, 15, False, False, None),
    "sobol": (MIXED, {"n": 16}, 16, True, True, None),
    "halton": (MIXED, {"n": 10}, 10, True, True, None),
    # 11 runs for the 9-term interactions model of a 3-level, a 2-level and a continuous factor (random starts)
    "d_optimal": ([cat("a", 3), cont("x"), cat("b", 2)], {"runs": 11, "model": "interactions"}, 11, True,
                  False, None),
    # Morris 1991: N (d + 1) points; Saltelli 2002: n (d + 2) points
    "morris": ([cont("x"), cont("y")], {"trajectories": 4}, 12, True, False, None),
    "saltelli": ([cont("x"), cont("y")], {"n": 8}, 32, True, False, None),
}


def test_the_methods_are_the_documents_methods_and_all_exported():
    assert set(METHODS) == set(CASES)
    assert set(METHODS) == set(DESIGN_METHODS) - {"auto", "optuna"}  # every design: name but the chooser and the adaptive one
    assert set(SOURCES) == set(METHODS)
    for name in METHODS:
        fn = design_method(name)
        assert fn.__name__ in xdoe.design.__all__ and getattr(xdoe.design, fn.__name__) is fn
    with pytest.raises(DesignError, match="unknown design method"):
        design_method("auto")


def test_another_name_of_a_method_is_refused_with_the_documents_name():
    """Each method has one name in a document; the Python function's, pyDOE's
    and the textbooks' names are refused with it as the hint."""
    from xdoe.documents import parse_design
    from xdoe.documents._design_spec import SYNONYMS

    assert set(SYNONYMS.values()) <= set(METHODS) and not set(SYNONYMS) & set(DESIGN_METHODS)
    for name in METHODS:  # every Python function named otherwise than its method is a synonym
        fn = design_method(name).__name__
        assert fn == name or SYNONYMS[fn] == name
    for word, method in [("latin_hypercube", "lhs"), ("ccd", "central_composite"), ("fracfact", "fractional_factorial"),
                         ("pbdesign", "plackett_burman"), ("BBD", "box_behnken")]:
        with pytest.raises(DesignError, match=f"did you mean '{method}'"):
            parse_design({"method": word})
        with pytest.raises(DesignError, match=f"did you mean '{method}'"):
            parse_design(word)


@pytest.mark.parametrize("name", list(CASES))
def test_every_method_keeps_the_contract(name):
    if name in ("morris", "saltelli"):
        pytest.importorskip("SALib")
    factors, options, n, draws, balanced, table = CASES[name]
    fn = design_method(name)
    assert list(inspect.signature(fn).parameters) == ["factors", "spec", "seed"]

    design = fn(factors, options, 7)
    # shape: one row per point, one column per factor, the method's name
    assert isinstance(design, Design) and design.method == name
    assert len(design) == n and design.points.shape == (n, len(factors))
    assert [f.name for f in design.factors] == [f.name for f in factors]
    # coded levels within range: the cube [-1, 1] (axial points at +-alpha, the factor widened to them)
    coded = design.coded()
    limit = np.asarray(design.scale if design.scale is not None else [1.0] * len(factors))
    assert np.all(np.abs(coded) <= limit + 1e-9)
    for j, f in enumerate(design.factors):
        if f.levels is not None:
            assert set(design.points[:, j]) <= set(range(len(f.levels)))
            if len(f.levels) == 2:
                assert set(coded[:, j]) <= {-1.0, 1.0}
    # the same seed, as an int or a SeedSequence, options as a mapping or a DesignSpec: the same design
    again = fn(factors, parse_design({"method": name, **options}), np.random.SeedSequence(7))
    assert again.points.tobytes() == design.points.tobytes()
    assert again.coded().tobytes() == coded.tobytes() and again.reason == design.reason
    # another seed: another design when the method draws, the same when it does not
    other = fn(factors, DesignSpec(name, dict(options)), 8)
    assert (other.points.tobytes() != design.points.tobytes()) == draws
    # balance within one where the method promises it (every level used)
    if balanced:
        for j, f in enumerate(design.factors):
            if f.levels is not None:
                counts = np.bincount(design.points[:, j].astype(int), minlength=len(f.levels))
                assert counts.min() > 0 and counts.max() - counts.min() <= 1
    if table is not None:
        assert table(design)
    # make_design builds the same points through the document's design: mapping
    made = make_design(factors, method={"method": name, **options}, seed=7)
    if name not in ("lhs", "maximin"):  # those two: the budget path (the same points, tested in test_designs.py)
        assert made.points.tobytes() == design.points.tobytes()


@pytest.mark.parametrize("name", list(CASES))
def test_every_method_refuses_options_it_does_not_have_and_a_bad_seed(name):
    factors, options, *_ = CASES[name]
    fn = design_method(name)
    with pytest.raises(DesignError, match="unknown option"):
        fn(factors, {**options, "nonsense": 1}, 0)
    with pytest.raises(DesignError, match="options of design"):
        fn(factors, DesignSpec("optuna" if name != "optuna" else "lhs", {}), 0)
    if CASES[name][3]:
        with pytest.raises(DesignError, match="seed"):
            fn(factors, options, -1)
