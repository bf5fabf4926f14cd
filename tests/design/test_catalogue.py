"""The minimum-aberration catalogue (xdoe.design._catalogue) against the
published word-length patterns, typed in here from the sources, and an
exhaustive search that no design of the same runs and factors has a smaller
word-length pattern (minimum aberration, Fries & Hunter 1980)."""

from __future__ import annotations

import numpy as np
import pytest

from xdoe.design import Factor, make_design
from xdoe.design import _catalogue as cat

# Chen, Sun & Wu (1993), Tables 2-4, the first design of each size (16 and 32
# runs: A3, A4, ...; 64 runs: A4, A5, ...), and Xu (2009), 128 and 256 runs
# (A4, A5, ...), as printed; factors -> word-length pattern
PUBLISHED = {
    16: {5: (0, 0, 1), 6: (0, 3, 0, 0), 7: (0, 7, 0, 0, 0), 8: (0, 14, 0, 0, 0, 1), 9: (4, 14, 8, 0, 4, 1, 0),
         10: (8, 18, 16, 8, 8, 5, 0, 0), 11: (12, 26, 28, 24, 20, 13, 4), 12: (16, 39, 48, 48, 48, 39, 16, 0, 0, 1)},
    32: {6: (0, 0, 0, 1, 0), 7: (0, 1, 2, 0, 0), 8: (0, 3, 4, 0, 0), 9: (0, 6, 8, 0, 0), 10: (0, 10, 16, 0, 0),
         11: (0, 25, 0, 27, 0), 12: (0, 38, 0, 52, 0), 13: (0, 55, 0, 96, 0), 14: (0, 77, 0, 168, 0),
         15: (0, 105, 0, 280, 0)},
    64: {7: (0, 0, 0, 1), 8: (0, 2, 1, 0), 9: (1, 4, 2, 0), 10: (2, 8, 4, 0), 11: (4, 14, 8, 0), 12: (6, 24, 16, 0),
         13: (14, 28, 24, 24), 14: (22, 40, 36, 56), 15: (30, 60, 60, 105)},
    128: {8: (0, 0, 0, 0, 1), 9: (0, 0, 3, 0, 0), 10: (0, 3, 3, 1, 0), 11: (0, 6, 6, 2, 1), 12: (1, 8, 12, 8),
          13: (2, 16, 18, 10), 14: (3, 24, 36, 16), 15: (7, 32, 52, 40)},
    256: {12: (0, 0, 12, 0, 3), 13: (0, 3, 12, 12), 14: (0, 9, 18, 16), 15: (0, 15, 30, 26)},
}
FIRST = {16: 3, 32: 3, 64: 4, 128: 4, 256: 4}  # the length of the first word count printed
# 8 runs (Wu & Hamada 2009, Appendix 5A) and the saturated designs, whose
# defining words are the codewords of the Hamming codes [7, 4] and [15, 11]
# (MacWilliams & Sloane 1977, ch. 1): A3, A4, ...
SMALL = {(4, 3): (1,), (8, 4): (0, 1), (8, 5): (2, 1, 0), (8, 6): (4, 3, 0, 0), (8, 7): (7, 7, 0, 0, 1),
         (16, 15): (35, 105, 168, 280, 435, 435, 280, 168, 105, 35, 0, 0, 1)}

# NIST/SEMATECH e-Handbook 5.3.3.4.7 and Montgomery (2012) Table 8.14: the
# fewest runs of a regular fraction of k factors at resolution III, IV, V
# (a resolution III design needs k <= N - 1, IV k <= N / 2, V at most 5, 6, 8,
# 11, 17 factors in 16, 32, 64, 128, 256 runs)
FEWEST_RUNS = {3: (4, 8, 8), 4: (8, 8, 16), 5: (8, 16, 16), 6: (8, 16, 32), 7: (8, 16, 64), 8: (16, 16, 64),
               9: (16, 32, 128), 10: (16, 32, 128), 11: (16, 32, 128), 12: (16, 32, 256), 13: (16, 32, 256),
               14: (16, 32, 256), 15: (16, 32, 256)}
# (k, asked) -> the resolution the fewest runs reach ("full": the full factorial)
HIGHER = {(3, 4): "full", (3, 5): "full", (4, 3): 4, (4, 5): "full", (5, 4): 5, (6, 5): 6, (7, 5): 7,
          (8, 3): 4, (9, 5): 6, (12, 5): 6}

_POPCOUNT = np.array([bin(i).count("1") for i in range(256)])


def published(runs: int, k: int) -> tuple[int, ...]:
    """The published pattern from A3 (A3 = 0 prepended where the source starts at A4)."""
    if (runs, k) in SMALL:
        return SMALL[runs, k]
    return (0,) * (FIRST[runs] - 3) + PUBLISHED[runs][k]


def matches(computed: tuple, printed: tuple) -> bool:
    """The computed pattern equals the printed one as far as that goes (a
    printed trailing 0 past the last word length counts as 0)."""
    padded = tuple(computed) + (0,) * max(0, len(printed) - len(computed))
    return padded[:len(printed)] == tuple(printed)


CASES = sorted((runs, k) for runs, ks in PUBLISHED.items() for k in ks) + sorted(SMALL)


@pytest.mark.parametrize("runs,k", CASES)
def test_every_catalogue_design_has_the_published_word_length_pattern(runs, k):
    e = cat.entry(runs, k)
    assert e is not None and len(e.columns) == k - runs.bit_length() + 1
    coded = cat.design_matrix(runs, e.columns)
    assert coded.shape == (runs, k)
    assert matches(cat.word_length_pattern(coded), published(runs, k))
    assert matches(e.wlp, published(runs, k))


def test_every_row_of_the_catalogue_agrees_with_its_own_columns():
    # rows past 15 factors (up to 40) are not typed in above: their stored
    # pattern against the one of their columns
    rows = cat.entries()
    assert {(e.runs, e.factors) for e in rows} >= set(CASES)
    for e in rows:
        assert matches(cat.word_length_pattern(cat.design_matrix(e.runs, e.columns)), e.wlp), (e.runs, e.factors)
        assert all(0 < c < e.runs and c & (c - 1) for c in e.columns) and len(set(e.columns)) == len(e.columns)


def _smaller_exists(runs: int, k: int, target: tuple[int, ...]) -> bool:
    """Whether some 2^(k-p) design in ``runs`` runs has a word-length pattern
    lexicographically below ``target``. Every design is isomorphic to one that
    holds the basic columns and, as its lightest added column, ``AB..``
    (``w`` letters: permute the basic factors), so the search tries each
    ``w`` and then every choice of the other added columns among the columns
    of ``w`` letters or more, depth first; a partial design is dropped once
    its pattern is not below ``target``, since adding columns only adds words."""
    p = k - runs.bit_length() + 1
    target = (tuple(target) + (0,) * k)[:k - 2]

    def search(cands, start, depth, xs, sizes, counts) -> bool:
        if depth == p:
            return True  # only designs below target get here
        for i in range(start, len(cands) - (p - depth) + 1):
            new_x = np.append(xs ^ cands[i], cands[i])  # the words the new column adds: basic part, added ones
            new_size = np.append(sizes + 1, 1)
            found = counts + np.bincount(_POPCOUNT[new_x] + new_size, minlength=k + 1)[3:k + 1]
            if tuple(found) < target and search(cands, i + 1, depth + 1, np.concatenate([xs, new_x]),
                                                 np.concatenate([sizes, new_size]), found):
                return True
        return False

    for w in range(2, runs.bit_length()):
        first = (1 << w) - 1  # the lightest added column: A B .. (w letters)
        cands = [c for c in range(1, runs) if _POPCOUNT[c] >= w and c != first]
        counts = np.bincount([w + 1], minlength=k + 1)[3:k + 1]
        if tuple(counts) < target and search(cands, 0, 1, np.array([first]), np.array([1]), counts):
            return True
    return False


FAST = [(runs, k) for runs in (8, 16, 32) for k in range(runs.bit_length(), min(runs, 16))]
FAST += [(64, k) for k in range(7, 13)] + [(128, k) for k in range(8, 12)]
SLOW = [(64, 13), (64, 14), (64, 15), (128, 12), (128, 13)]


@pytest.mark.parametrize("runs,k", FAST + [pytest.param(*c, marks=pytest.mark.slow) for c in SLOW])
def test_no_design_has_less_aberration_than_the_catalogue_one(runs, k):
    e = cat.entry(runs, k)
    assert not _smaller_exists(runs, k, cat.word_length_pattern(cat.design_matrix(runs, e.columns)))


def test_the_search_finds_less_aberration_than_pydoe_fracfact_by_res():
    # pydoe's 16-run design for 8 factors at III has five words of length 3 (A3..: 5, 5, 2, 2, ...)
    import pydoe

    old = np.asarray(pydoe.fracfact_by_res(8, 3), float)
    assert cat.word_length_pattern(old)[0] == 5
    assert _smaller_exists(16, 8, cat.word_length_pattern(old))


def test_word_length_pattern_of_textbook_designs():
    # Montgomery 2012, Example 8.4: 2^(6-2) IV, E = ABC, F = BCD: I = ABCE = BCDF = ADEF
    assert cat.word_length_pattern(cat.design_matrix(16, (7, 14)))[:4] == (0, 3, 0, 0)
    # the 2^(5-1) V design I = ABCDE
    assert cat.word_length_pattern(cat.design_matrix(16, (15,))) == (0, 0, 1)
    # a non-regular design: the 12-run Plackett-Burman has generalized A3 = 165 * (1/3)^2 = 18.33 for 11 factors
    import pydoe

    pb = np.asarray(pydoe.pbdesign(11), float)
    assert cat.word_length_pattern(pb)[0] == pytest.approx(165 / 9)


@pytest.mark.parametrize("k", sorted(FEWEST_RUNS))
@pytest.mark.parametrize("asked", [3, 4, 5])
def test_resolution_asked_takes_the_fewest_runs_and_at_least_that_resolution(k, asked):
    names = [f"x{i}" for i in range(k)]
    design = make_design([Factor(n, levels=(0, 1)) for n in names],
                         method={"method": "fractional_factorial", "resolution": asked})
    assert len(design) == FEWEST_RUNS[k][asked - 3]
    got = design.info["resolution"]
    assert design.info["requested_resolution"] == asked
    assert got == HIGHER.get((k, asked), asked)
    found = design.diagnostics["resolution"]
    assert (found is None) if got == "full" else found == got
    assert design.diagnostics["d_efficiency"] == pytest.approx(100.0)


def test_the_design_is_the_catalogue_one_in_yates_order_basic_factors_first():
    factors = [Factor(n, levels=(0, 1)) for n in "ABCDEFG"]
    design = make_design(factors, method={"method": "fractional_factorial", "resolution": 4})
    coded = design.coded()
    assert design.info["generators"] == "a b c d abc abd acd"  # E = ABC, F = ABD, G = ACD
    assert coded[:4, :4].tolist() == [[-1, -1, -1, -1], [1, -1, -1, -1], [-1, 1, -1, -1], [1, 1, -1, -1]]
    assert np.array_equal(coded[:, 4], coded[:, 0] * coded[:, 1] * coded[:, 2])
    again = make_design(factors, method={"method": "fractional_factorial", "resolution": 4}, seed=5)
    assert np.array_equal(again.coded(), coded)  # no randomness: any seed, the same design


def test_the_generators_given_back_rebuild_the_same_fraction():
    factors = [Factor(f"x{i}", levels=(0, 1)) for i in range(9)]
    by_res = make_design(factors, method={"method": "fractional_factorial", "resolution": 4})
    by_gen = make_design(factors, method={"method": "fractional_factorial", "generators": by_res.info["generators"]})
    assert {tuple(r) for r in by_res.coded()} == {tuple(r) for r in by_gen.coded()}
    assert by_gen.diagnostics["resolution"] == 4


def test_the_reason_says_when_a_higher_resolution_costs_no_more_runs():
    factors = [Factor(f"x{i}", levels=(0, 1)) for i in range(8)]
    design = make_design(factors, method={"method": "fractional_factorial", "resolution": 3})
    assert len(design) == 16 and "resolution IV at no extra runs (asked III)" in design.reason
    full = make_design(factors[:3], method={"method": "fractional_factorial", "resolution": 4})
    assert len(full) == 8 and "full factorial" in full.reason


def test_more_factors_than_the_catalogue_holds_is_refused():
    from xdoe.errors import DesignError

    for k, asked in ((18, 5), (33, 3)):  # 33 factors at III would take 64 runs: not in the catalogue
        with pytest.raises(DesignError, match=f"no design of {k} factors at resolution {asked}"):
            make_design([Factor(f"x{i}", levels=(0, 1)) for i in range(k)],
                        method={"method": "fractional_factorial", "resolution": asked})
    assert len(make_design([Factor(f"x{i}", levels=(0, 1)) for i in range(33)],
                           method={"method": "fractional_factorial", "resolution": 4})) == 128
