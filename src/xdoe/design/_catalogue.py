"""The catalogue of minimum-aberration regular two-level fractional
factorial designs that ``design: {method: fractional_factorial, resolution: R}``
reads, and the word-length pattern of a two-level design.

A regular 2^(k-p) design in ``N = 2^r`` runs has ``r`` basic factors (a full
factorial, rows in standard (Yates) order: the first basic factor alternates
fastest) and ``p`` added factors, each the product of some basic factors.
A column is named by its Yates number: bit ``i`` is basic factor ``i``
(1 = A, 2 = B, 4 = C, 3 = AB, 7 = ABC, 15 = ABCD), so the 2^(7-3) design
E = ABC, F = ABD, G = ACD is "7,11,13" in 16 runs. Its defining relation
has ``2^p - 1`` words; ``A_j`` counts the words of length ``j`` and the
word-length pattern is ``(A3, A4, ...)``. The resolution is the length of
the shortest word; a design has *minimum aberration* (Fries & Hunter 1980)
when no design of the same runs and factors has a lexicographically smaller
word-length pattern (it then has the highest resolution too).

Every row below is the minimum-aberration design of its runs and factors:

* ``CSW93``: Chen, Sun & Wu (1993), "A catalogue of two-level and
  three-level fractional factorial designs with small runs", International
  Statistical Review 61, 131-145, Tables 2-4 (16, 32 and 64 runs): the first
  design of each size. Transcribed from the digital copy of the tables in
  the R package doeR (A. Bohyn, data ``csw``); word-length patterns as
  printed there (16 and 32 runs from A3; 64 runs from A4, A3 = 0 added here),
  cut where the table cuts them.
* ``Xu09``: Xu (2009), "Algorithmic construction of efficient fractional
  factorial designs with large run sizes", Technometrics 51, 262-277: the
  minimum-aberration designs of 128 runs (8-40 factors) and of 256 runs for
  12-17 factors (the resolution V designs beyond 128 runs); from doeR's data
  ``xu``, word-length patterns printed from A4 (A3 = 0 added here).
* ``M8.14``: Montgomery, *Design and Analysis of Experiments* (8th ed.
  2012), Table 8.14: the 2^(4-1) IV design D = ABC.
* ``unique``: every design of that size is isomorphic (it drops at most two
  columns from the saturated design, and GL(r, 2) moves any two columns to
  any other two), so it is the minimum-aberration design: 3 factors in 4
  runs, 5-7 in 8, 13-15 in 16, 29-31 in 32. Their word-length patterns were
  computed with :func:`word_length_pattern`; the saturated ones are the
  weight distributions of the Hamming codes.

``tests/design/test_catalogue.py`` recomputes every row's word-length pattern
from its columns, checks it against the published numbers typed in the
test, and proves minimum aberration by exhaustive search for 8, 16 and 32
runs, 64 runs up to 15 factors and 128 runs up to 13.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["Entry", "entry", "entries", "minimum_aberration", "design_matrix", "generators",
           "word_length_pattern", "RUNS"]

#: the run sizes of the catalogue
RUNS = (4, 8, 16, 32, 64, 128, 256)

# runs, factors, source, word-length pattern (A3, A4, ...), added columns (Yates numbers)
_TABLE = """
  4  3 unique 1                      3
  8  4 M8.14 0,1                    7
  8  5 unique 2,1,0                  3,5
  8  6 unique 4,3,0,0                3,5,6
  8  7 unique 7,7,0,0,1              3,5,6,7
 16  5 CSW93 0,0,1                  15
 16  6 CSW93 0,3,0,0                7,11
 16  7 CSW93 0,7,0,0,0              7,11,13
 16  8 CSW93 0,14,0,0,0,1           7,11,13,14
 16  9 CSW93 4,14,8,0,4,1,0         3,5,9,14,15
 16 10 CSW93 8,18,16,8,8,5,0,0      3,5,6,9,14,15
 16 11 CSW93 12,26,28,24,20,13,4    3,5,6,9,10,13,14
 16 12 CSW93 16,39,48,48,48,39,16,0,0,1 3,5,6,9,10,13,14,15
 16 13 unique 22,55,72,96,116,87,40,16,6,1 3,5,6,7,9,10,11,13,14
 16 14 unique 28,77,112,168,232,203,112,56,28,7 3,5,6,7,9,10,11,12,13,14
 16 15 unique 35,105,168,280,435,435,280,168,105,35,0,0,1 3,5,6,7,9,10,11,12,13,14,15
 32  6 CSW93 0,0,0,1                31
 32  7 CSW93 0,1,2,0,0              7,27
 32  8 CSW93 0,3,4,0,0              7,11,29
 32  9 CSW93 0,6,8,0,0              7,11,19,29
 32 10 CSW93 0,10,16,0,0            7,11,19,29,30
 32 11 CSW93 0,25,0,27,0            7,11,13,19,21,25
 32 12 CSW93 0,38,0,52,0            7,11,13,14,19,21,25
 32 13 CSW93 0,55,0,96,0            7,11,13,14,19,21,22,25
 32 14 CSW93 0,77,0,168,0           7,11,13,14,19,21,22,25,26
 32 15 CSW93 0,105,0,280,0          7,11,13,14,19,21,22,25,26,28
 32 16 CSW93 0,140,0,448,0          7,11,13,14,19,21,22,25,26,28,31
 32 17 CSW93 8,140,112,448          3,5,9,14,15,17,22,23,26,27,28,29
 32 18 CSW93 16,148,224,560         3,5,6,9,14,15,17,22,23,26,27,28,29
 32 19 CSW93 24,164,344,784         3,5,6,9,10,14,15,17,22,23,26,27,28,29
 32 20 CSW93 32,188,480,1128        3,5,6,9,10,14,15,17,18,22,23,26,27,28,29
 32 21 CSW93 40,220,641,1608        3,5,6,9,10,14,15,17,18,22,23,26,27,28,29,31
 32 22 CSW93 48,263,832,2224        3,5,6,9,10,13,14,15,17,18,21,22,23,25,26,29,30
 32 23 CSW93 56,315,1064,3024       3,5,6,9,10,13,14,15,17,18,21,22,23,25,26,27,28,29
 32 24 CSW93 64,378,1344,4032       3,5,6,9,10,13,14,15,17,18,21,22,23,25,26,27,28,29,30
 32 25 CSW93 76,442,1656,5376       3,5,6,7,9,10,11,12,13,17,18,19,20,21,26,27,28,29,30,31
 32 26 CSW93 88,518,2032,7032       3,5,6,7,9,10,11,12,13,14,17,18,19,20,21,26,27,28,29,30,31
 32 27 CSW93 100,606,2484,9064      3,5,6,7,9,10,11,12,13,14,17,18,19,20,21,22,25,26,27,28,29,30
 32 28 CSW93 112,707,3024,11536     3,5,6,7,9,10,11,12,13,14,17,18,19,20,21,22,25,26,27,28,29,30,31
 32 29 unique 126,819,3640,14560     3,5,6,7,9,10,11,12,13,14,17,18,19,20,21,22,24,25,26,27,28,29,30,31
 32 30 unique 140,945,4368,18200     3,5,6,7,9,10,11,12,13,14,15,17,18,19,20,21,22,23,24,25,26,27,28,29,30
 32 31 unique 155,1085,5208,22568    3,5,6,7,9,10,11,12,13,14,15,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
 64  7 CSW93 0,0,0,0,1              63
 64  8 CSW93 0,0,2,1,0              15,51
 64  9 CSW93 0,1,4,2,0              7,27,45
 64 10 CSW93 0,2,8,4,0              7,27,43,53
 64 11 CSW93 0,4,14,8,0             7,11,29,45,51
 64 12 CSW93 0,6,24,16,0            7,11,29,45,51,62
 64 13 CSW93 0,14,28,24,24          7,11,21,25,38,58,60
 64 14 CSW93 0,22,40,36,56          7,11,19,30,37,41,49,60
 64 15 CSW93 0,30,60,60,105         7,11,19,30,37,41,49,60,63
 64 16 CSW93 0,43,81,96,189         7,11,13,19,21,35,37,57,58,60
 64 17 CSW93 0,59,108,150,324       7,11,13,14,19,21,35,37,57,58,60
 64 18 CSW93 0,78,144,228           7,11,13,14,19,21,22,35,37,57,58,60
 64 19 CSW93 0,100,192,336          7,11,13,14,19,21,22,35,37,38,57,58,60
 64 20 CSW93 0,125,256,480          7,11,13,14,19,21,22,35,37,38,57,58,60,63
 64 21 CSW93 0,204,0,1680           7,11,13,14,19,21,22,25,35,41,42,49,52,56,62
 64 22 CSW93 0,250,0,2304           7,11,13,14,19,21,22,25,35,37,41,42,49,52,56,62
 64 23 CSW93 0,304,0,3105           7,11,13,14,19,21,22,25,26,35,37,41,44,49,52,56,62
 64 24 CSW93 0,365,0,4138           7,11,13,14,19,21,22,25,26,35,37,38,41,42,49,52,56,62
 64 25 CSW93 0,435,0,5440           7,11,13,14,19,21,22,25,26,28,35,37,38,41,42,49,52,56,62
 64 26 CSW93 0,515,0,7062           7,11,13,14,19,21,22,25,26,28,35,37,38,41,42,44,49,50,52,56
 64 27 CSW93 0,605,0,9075           7,11,13,14,19,21,22,25,26,28,31,35,37,38,41,42,44,49,50,52,56
 64 28 CSW93 0,706,0,11548          7,11,13,14,19,21,22,25,26,28,31,35,37,38,41,42,44,47,49,50,52,56
 64 29 CSW93 0,819,0,14560          7,11,13,14,19,21,22,25,26,28,31,35,37,38,41,42,44,47,49,50,52,55,56
 64 30 CSW93 0,945,0,18200          7,11,13,14,19,21,22,25,26,28,31,35,37,38,41,42,44,47,49,50,52,55,56,59
 64 31 CSW93 0,1085,0,22568         7,11,13,14,19,21,22,25,26,28,31,35,37,38,41,42,44,47,49,50,52,55,56,59,61
 64 32 CSW93 0,1240,0,27776         7,11,13,14,19,21,22,25,26,28,31,35,37,38,41,42,44,47,49,50,52,55,56,59,61,62
128  8 Xu09  0,0,0,0,0,1            127
128  9 Xu09  0,0,0,3,0,0            31,103
128 10 Xu09  0,0,3,3,1,0            31,103,43
128 11 Xu09  0,0,6,6,2,1            31,103,43,85
128 12 Xu09  0,1,8,12,8             31,103,43,85,121
128 13 Xu09  0,2,16,18,10           31,103,43,85,44,86
128 14 Xu09  0,3,24,36,16           31,103,43,85,46,61,114
128 15 Xu09  0,7,32,52,40           31,103,43,85,46,61,114,67
128 16 Xu09  0,10,48,72             31,103,43,85,44,86,88,53,110
128 17 Xu09  0,15,60,130            31,103,43,85,46,61,114,67,78,116
128 18 Xu09  0,20,80,200            31,103,43,85,46,61,114,67,78,116,121
128 19 Xu09  0,27,120,235           31,103,43,85,46,61,114,67,78,55,58,86
128 20 Xu09  0,36,152,340           31,103,43,85,46,61,114,67,78,55,58,86,91
128 21 Xu09  0,51,200,414           31,103,43,85,44,82,54,56,88,78,123,125,104,25
128 22 Xu09  0,65,248,572           31,103,43,85,44,86,88,53,78,58,83,97,28,104,114
128 23 Xu09  0,83,316,744           31,103,43,85,44,82,54,56,88,78,123,125,104,25,112,49
128 24 Xu09  0,102,384,992          31,103,43,85,44,86,88,53,110,19,28,57,67,98,100,26,105
128 25 Xu09  0,124,482,1312         31,103,43,85,44,86,88,53,38,58,79,83,110,124,97,104,114,123
128 26 Xu09  0,152,568,1704         31,103,43,85,44,86,88,53,110,19,28,57,67,98,100,26,105,62,77
128 27 Xu09  0,180,690,2200         31,103,43,85,44,86,88,53,110,19,28,57,67,98,100,26,105,62,77,112
128 28 Xu09  0,210,840,2800         31,103,43,85,44,86,88,53,110,19,28,57,67,98,100,26,105,62,77,112,127
128 29 Xu09  0,266,945,3472         31,103,43,85,44,86,88,53,110,19,28,57,67,98,100,26,105,62,77,112,127,124
128 30 Xu09  0,335,972,4662         31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28
128 31 Xu09  0,391,1134,5826        31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,91
128 32 Xu09  0,452,1322,7219        31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97
128 33 Xu09  0,518,1543,8863        31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70
128 34 Xu09  0,589,1800             31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79
128 35 Xu09  0,665,2100             31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79,93
128 36 Xu09  0,756,2401             31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79,93,62
128 37 Xu09  0,854,2744             31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79,93,62,87
128 38 Xu09  0,959,3136             31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79,93,62,87,88
128 39 Xu09  0,1071,3584            31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79,93,62,87,88,91
128 40 Xu09  0,1190,4096            31,103,43,81,45,26,114,127,22,67,56,94,116,7,38,108,14,69,53,25,73,121,28,51,97,70,79,93,62,87,88,91,106
256 12 Xu09  0,0,0,12,0,3           127,143,179,213
256 13 Xu09  0,0,3,12,12            127,143,179,213,105
256 14 Xu09  0,0,9,18,16            127,143,179,213,105,27
256 15 Xu09  0,0,15,30,26           127,143,179,213,105,27,46
256 16 Xu09  0,0,24,44,40           127,143,179,85,150,75,108,189
256 17 Xu09  0,0,34,68,68           127,143,179,85,150,75,108,189,229
"""


class Entry(NamedTuple):
    """One catalogue row: ``runs`` (N), ``factors`` (k), ``columns`` (the
    ``k - log2 N`` added columns as Yates numbers), ``wlp`` (the published
    word-length pattern from A3, as far as the source prints it) and
    ``source``."""

    runs: int
    factors: int
    columns: tuple[int, ...]
    wlp: tuple[int, ...]
    source: str

    @property
    def resolution(self) -> int:
        """The length of the shortest defining word (the first non-zero
        ``A_j`` of the word-length pattern)."""
        return 3 + next(i for i, a in enumerate(self.wlp) if a)


def _parse() -> dict[tuple[int, int], Entry]:
    out = {}
    for line in _TABLE.strip().splitlines():
        runs, k, source, wlp, columns = line.split()
        out[int(runs), int(k)] = Entry(int(runs), int(k), tuple(int(c) for c in columns.split(",")),
                                       tuple(int(a) for a in wlp.split(",")), source)
    return out


_ENTRIES = _parse()


def entries() -> list[Entry]:
    """Every catalogue row, by runs then factors."""
    return sorted(_ENTRIES.values())


def entry(runs: int, factors: int) -> Entry | None:
    """The minimum-aberration design of ``factors`` factors in ``runs`` runs,
    ``None`` when the catalogue has none (a full factorial, or too many factors)."""
    return _ENTRIES.get((runs, factors))


def minimum_aberration(factors: int, resolution: int) -> Entry | None:
    """The minimum-aberration design of the fewest runs whose resolution is
    at least ``resolution``; ``None`` when the full factorial (``2^factors``
    runs) comes first. That design's resolution may exceed the one asked
    (8 factors at III: the 16-run design is IV).

    Raises:
        ValueError: no catalogue design of ``factors`` factors reaches ``resolution``.
    """
    for runs in RUNS:
        if 2**factors <= runs:
            return None
        found = _ENTRIES.get((runs, factors))
        if found is not None and found.resolution >= resolution:
            return found
        if found is None and factors < runs and not (resolution > 3 and 2 * factors > runs):
            break  # a fraction of these runs may reach the resolution (IV needs k <= N/2): not in the catalogue
    raise ValueError(f"no design of {factors} factors at resolution {resolution} in the catalogue "
                     "(it reaches resolution III up to 32 factors, IV up to 40, V up to 17)")


def design_matrix(runs: int, columns: tuple[int, ...] | list[int]) -> np.ndarray:
    """The ``(runs, log2(runs) + len(columns))`` ±1 matrix of a regular
    design: the basic factors in standard (Yates) order, then each added
    column the product of its basic factors."""
    r = int(math.log2(runs))
    rows = np.arange(runs)[:, None]
    basic = np.where((rows >> np.arange(r)) & 1, 1, -1)
    added = [np.prod(basic[:, [i for i in range(r) if c >> i & 1]], axis=1) for c in columns]
    return np.column_stack([basic, *added]) if added else basic


def generators(runs: int, columns: tuple[int, ...] | list[int]) -> str:
    """The design's generators in pydoe's ``fracfact`` syntax (the
    ``generators:`` option): ``"a b c d abc abd acd"``."""
    r = int(math.log2(runs))
    letters = "abcdefghijklmnopqrstuvwxyz"
    basic = [letters[i] for i in range(r)]
    return " ".join(basic + ["".join(letters[i] for i in range(r) if c >> i & 1) for c in columns])


def _krawtchouk(j: int, i: int, k: int) -> int:
    return sum((-1) ** s * math.comb(i, s) * math.comb(k - i, j - s) for s in range(j + 1))


def word_length_pattern(coded: np.ndarray) -> tuple[float, ...]:
    """``(A3, A4, ..., Ak)`` of an ``(n, k)`` two-level design coded ±1: the
    number of defining words of each length of a regular fraction (integers),
    the generalized word-length pattern of a non-regular one (Xu & Wu 2001).
    Computed from the runs' distance distribution by the MacWilliams identity
    ``A_j = n^-2 sum_i P_i K_j(i)`` (``P_i`` ordered pairs of runs at Hamming
    distance ``i``, ``K_j`` the Krawtchouk polynomial), ``O(n^2 k)``; ``A1``
    and ``A2`` (zero when main effects are orthogonal) are left out."""
    x = np.asarray(coded, float)
    n, k = x.shape
    dist = np.rint((k - x @ x.T) / 2).astype(int)
    pairs = np.bincount(dist.ravel(), minlength=k + 1)
    out = []
    for j in range(3, k + 1):
        total = sum(int(p) * _krawtchouk(j, i, k) for i, p in enumerate(pairs) if p)
        out.append(total // n**2 if total % n**2 == 0 else total / n**2)
    return tuple(out)
