"""Screening and response-surface designs: fractional factorial,
Plackett-Burman, central composite and Box-Behnken.

Each function takes the factors and the parsed ``design:`` options and
returns ``(coded, info)``: the ``(n, d)`` coded matrix (the factorial cube is
``[-1, 1]^d``; axial points of a circumscribed central composite design lie
at ``±alpha``) and a dict of what the design is (generators, resolution,
alpha, centre points). :func:`coded_design` turns it into design points:
a two-level factor (``levels: [low, high]``) takes index 0 at ``-1`` and 1 at
``+1``; a continuous factor (``range: [low, high]``) its unit position
``(c + 1) / 2``. A circumscribed design's axial points lie outside the range:
the factor is widened to ``±alpha`` (in the factor's scale: log factors in
log space) so that every point stays a unit position of the design's factor.

Sources: a fraction by ``resolution`` is the minimum-aberration design of
the fewest runs that reaches it, from the catalogue of
:mod:`xdoe.design._catalogue` (Chen, Sun & Wu 1993; Xu 2009), rows in
standard order of its basic factors, which come first; a fraction by
``generators`` is pydoe's ``fracfact`` (https://github.com/pydoe/pydoe);
``pbdesign`` (Plackett & Burman 1946) and ``ccdesign`` (Box & Wilson 1951;
the orthogonal-blocking alpha of Box & Hunter 1957) are pydoe's; Box-Behnken
designs are built from the table of Box & Behnken (1960), Technometrics 2,
455-475 (:data:`BOX_BEHNKEN`; pydoe's ``bbdesign`` puts a 2^2 factorial on
every pair, which is not their design past 5 factors).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from xdoe.design._common import check_factors, spec_of
from xdoe.design._design import Design
from xdoe.design._factors import Factor
from xdoe.documents import DesignSpec
from xdoe.errors import DesignError

__all__ = ["fractional_factorial", "plackett_burman", "central_composite", "box_behnken", "coded_design", "CLASSIC"]

CLASSIC = ("fractional_factorial", "plackett_burman", "central_composite", "box_behnken")
#: centre points of a central composite design when ``center`` is not given
DEFAULT_CENTER = {"central_composite": 4}
#: centre points of the published Box-Behnken designs (Box & Behnken 1960; NIST/SEMATECH
#: e-Handbook 5.3.3.6.3: 15, 27, 46, 54 and 62 runs for 3 to 7 factors), used when ``center`` is not given
BOX_BEHNKEN_CENTER = {3: 3, 4: 3, 5: 6, 6: 6, 7: 6}


def _two_level(factors: Sequence[Factor], method: str) -> None:
    for f in factors:
        if f.levels is not None and len(f.levels) != 2:
            raise DesignError(f"{method} needs two-level factors (levels: [low, high]) or ranges, but factor "
                              f"{f.name!r} has {len(f.levels)} levels")


def _continuous(factors: Sequence[Factor], method: str) -> None:
    for f in factors:
        if f.levels is not None:
            raise DesignError(f"{method} needs continuous factors (range: [low, high]), but factor {f.name!r} "
                              "has levels")


def _centre(coded: np.ndarray, factors: Sequence[Factor], center: int, method: str) -> np.ndarray:
    if not center:
        return coded
    cats = [f.name for f in factors if f.levels is not None]
    if cats:
        raise DesignError(f"{method}: centre points need every factor continuous (range), but {cats[0]!r} has "
                          "levels; drop center or give it a range")
    return np.vstack([coded, np.zeros((center, coded.shape[1]))])


ROMAN = {3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII", 9: "IX", 10: "X"}
_SOURCES = {"CSW93": "Chen, Sun & Wu 1993", "Xu09": "Xu 2009", "M8.14": "Montgomery 2012, Table 8.14",
            "unique": "the only design of its size"}


def _by_resolution(d: int, resolution: int) -> tuple[np.ndarray, dict]:
    """The minimum-aberration fraction of the fewest runs at resolution
    ``resolution`` or more (:mod:`xdoe.design._catalogue`), or the full
    factorial when no fraction needs fewer runs; columns: basic factors,
    then added ones."""
    from xdoe.design import _catalogue

    try:
        found = _catalogue.minimum_aberration(d, resolution)
    except ValueError as exc:
        raise DesignError(f"fractional_factorial: {exc}; give generators or fewer factors") from None
    if found is None:
        runs = 2**d
        return _catalogue.design_matrix(runs, ()), {"resolution": "full", "requested_resolution": resolution,
                                                    "generators": _catalogue.generators(runs, ())}
    return _catalogue.design_matrix(found.runs, found.columns), {
        "resolution": found.resolution, "requested_resolution": resolution,
        "generators": _catalogue.generators(found.runs, found.columns),
        "word_length_pattern": list(found.wlp), "source": _SOURCES[found.source]}


def resolution_note(info: dict) -> str:
    """What the dry run says of a fraction chosen by resolution: ``"resolution
    IV at no extra runs (asked III)"``, ``"minimum-aberration resolution IV"``
    or ``"full factorial (no fraction of fewer runs reaches resolution V)"``;
    empty without ``requested_resolution``."""
    asked = info.get("requested_resolution")
    if asked is None:
        return ""
    got = info["resolution"]
    if got == "full":
        return f"full factorial (no fraction of fewer runs reaches resolution {ROMAN[asked]})"
    if got > asked:
        return f"minimum aberration, resolution {ROMAN.get(got, got)} at no extra runs (asked {ROMAN[asked]})"
    return f"minimum aberration, resolution {ROMAN.get(got, got)}"


def _fractional(factors: Sequence[Factor], spec: DesignSpec) -> tuple[np.ndarray, dict]:
    import pydoe

    d = len(factors)
    _two_level(factors, "fractional_factorial")
    generators = spec.get("generators")
    if generators is not None:
        words = generators.split()
        if len(words) != d:
            raise DesignError(f"fractional_factorial: generators name {len(words)} columns for {d} factors "
                              f"({', '.join(f.name for f in factors)})")
        try:
            coded = pydoe.fracfact(generators)
        except ValueError as exc:
            raise DesignError(f"fractional_factorial: generators {generators!r}: {exc}") from None
        _distinct_columns(np.asarray(coded, float), words, generators)
        info = {"generators": generators}
    else:
        if d < 2:
            raise DesignError("fractional_factorial needs at least two factors")
        coded, info = _by_resolution(d, spec.get("resolution", 4))
    return _centre(np.asarray(coded, float), factors, spec.get("center", 0), "fractional_factorial"), info


def _distinct_columns(coded: np.ndarray, words: list[str], generators: str) -> None:
    """Refuse generators whose columns (``coded``, runs x factors) include a
    constant one (a word whose letters cancel, ``aa``) or two equal up to
    sign (``abb`` is ``a``, ``-ba`` is ``ab``): such a factor never varies or
    cannot be told from another, which pydoe's string checks let through.

    Raises:
        DesignError: naming the word and the column it repeats.
    """
    for j, word in enumerate(words):
        if np.all(coded[:, j] == coded[0, j]):
            raise DesignError(f"fractional_factorial: generators {generators!r}: {word!r} is the constant "
                              "column (its letters cancel in pairs), so that factor would never vary")
        for i in range(j):
            if abs(float(coded[:, i] @ coded[:, j])) == len(coded):
                raise DesignError(f"fractional_factorial: generators {generators!r}: {word!r} is the same column "
                                  f"as {words[i]!r} (up to sign: a letter twice cancels), so the two factors "
                                  "cannot be told apart")


#: Plackett & Burman (1946), "The design of optimum multifactorial experiments", Biometrika 33,
#: 305-325 (Montgomery 2012, Table 8.23; NIST/SEMATECH 5.3.3.5): runs -> the published generator,
#: the first run of the cyclic design (each next run shifts it one place to the right, the last has
#: every factor low). Each is checked orthogonal in tests/design/test_plackett_burman.py.
PLACKETT_BURMAN = {
    12: "++-+++---+-",
    20: "++--++++-+-+----++-",
    24: "+++++-+-++--++--+-+----",
    36: "-+-+++---+++++-+++--+----+-+-++--+-",
    44: "++--+-+--+++-+++++---+-+++-----+---++-+-++-",
}


def plackett_burman_points(k: int) -> np.ndarray:
    """The Plackett-Burman design of ``k`` factors, coded ±1, shape ``(N, k)``,
    ``N`` the next multiple of 4 above ``k``: for 12, 20, 24, 36 and 44 runs the
    first ``k`` columns of the published cyclic design (:data:`PLACKETT_BURMAN`),
    else pydoe's ``pbdesign`` (4, 8, 16, 32 ... runs: Sylvester's Hadamard
    matrix, a regular fraction; 40, 48, 80 ... runs: a doubled 20- or 12-run
    design). pydoe builds 24 runs by doubling the 12-run design too, which
    aliases main effects fully with two-factor interactions where the
    published design aliases each partially (|r| 1/3); that is why the
    cyclic designs are built here (an upstream fix belongs in pydoe).

    Raises:
        DesignError: no design of ``N`` runs is carried (28, 52, 56 ... runs).
    """
    import pydoe

    runs = 4 * (k // 4 + 1)
    if runs in PLACKETT_BURMAN:
        generator = np.array([1.0 if c == "+" else -1.0 for c in PLACKETT_BURMAN[runs]])
        rows = [np.roll(generator, i) for i in range(runs - 1)] + [-np.ones(runs - 1)]
        return np.array(rows)[:, :k]
    try:
        return np.asarray(pydoe.pbdesign(k), float)
    except ValueError:  # pydoe builds 2^e, 12 x 2^e and 20 x 2^e runs only
        raise DesignError(f"plackett_burman: no design of {runs} runs for {k} factors (carried: 4, 8, 12, 16, 20, "
                          "24, 32, 36, 40, 44, 48, 64 ... runs: the published cyclic designs, 2^e, 12 x 2^e, "
                          "20 x 2^e); use fewer factors or fractional_factorial with resolution: 3") from None


def _plackett_burman(factors: Sequence[Factor], spec: DesignSpec) -> tuple[np.ndarray, dict]:
    _two_level(factors, "plackett_burman")
    if not factors:
        raise DesignError("plackett_burman needs at least one factor")
    coded = plackett_burman_points(len(factors))
    return _centre(coded, factors, spec.get("center", 0), "plackett_burman"), {}


def _central_composite(factors: Sequence[Factor], spec: DesignSpec) -> tuple[np.ndarray, dict]:
    import pydoe

    _continuous(factors, "central_composite")
    d = len(factors)
    if d < 2:
        raise DesignError("central_composite needs at least two continuous factors")
    center = spec.get("center", DEFAULT_CENTER["central_composite"])
    face, alpha = spec.get("face", "circumscribed"), spec.get("alpha", "rotatable")
    # centre points split between the factorial and the axial block (pydoe's
    # orthogonal alpha is the orthogonal-blocking alpha of these two blocks)
    split = (center - center // 2, center // 2)
    coded = np.asarray(pydoe.ccdesign(d, center=split, alpha=alpha, face=face), float)
    axial = float(np.abs(coded).max()) if face == "circumscribed" else 1.0
    cube = float(np.abs(coded[0]).max())
    return coded, {"model": "quadratic", "face": face, "alpha": alpha,  # the model of its diagnostics
                   "alpha_value": axial if face != "inscribed" else 1.0 / cube, "center": center}


#: Box & Behnken (1960), Table: per number of factors the blocks of factors
#: (1-based, as published) that run a full 2^m factorial while the others
#: stay at 0. 3-5 factors: every pair (4 and 5 in the published order of
#: their orthogonal blocks); 6: the six blocks of three of a partially
#: balanced incomplete block design (each factor in three blocks); 7: the
#: seven lines of the Fano plane (a BIBD, every pair in one block).
BOX_BEHNKEN = {
    3: ((1, 2), (1, 3), (2, 3)),
    4: ((1, 2), (3, 4), (1, 4), (2, 3), (1, 3), (2, 4)),
    5: ((1, 2), (1, 3), (3, 4), (4, 5), (2, 5), (1, 4), (1, 5), (2, 3), (2, 4), (3, 5)),
    6: ((1, 2, 4), (2, 3, 5), (3, 4, 6), (1, 4, 5), (2, 5, 6), (1, 3, 6)),
    7: ((4, 5, 6), (1, 6, 7), (2, 5, 7), (1, 2, 4), (3, 4, 7), (1, 3, 5), (2, 3, 6)),
}


def box_behnken_points(k: int) -> np.ndarray:
    """The ``(n, k)`` non-centre points of the Box-Behnken design of ``k``
    factors (:data:`BOX_BEHNKEN`): per block, the 2^m factorial in standard
    order on its factors (12, 24, 40, 48, 56 points for k = 3..7)."""
    blocks = BOX_BEHNKEN[k]
    m = len(blocks[0])
    cube = np.where((np.arange(2**m)[:, None] >> np.arange(m)) & 1, 1.0, -1.0)
    out = np.zeros((len(blocks) * len(cube), k))
    for b, block in enumerate(blocks):
        out[b * len(cube):(b + 1) * len(cube), [j - 1 for j in block]] = cube
    return out


def _box_behnken(factors: Sequence[Factor], spec: DesignSpec) -> tuple[np.ndarray, dict]:
    _continuous(factors, "box_behnken")
    k = len(factors)
    if k not in BOX_BEHNKEN:
        raise DesignError(f"box_behnken is defined for 3 to 7 continuous factors (Box & Behnken 1960), not {k}; "
                          "use central_composite or d_optimal with model: quadratic")
    center = spec.get("center", BOX_BEHNKEN_CENTER[k])
    coded = np.vstack([box_behnken_points(k), np.zeros((center, k))])
    return coded, {"model": "quadratic", "center": center}  # the model of its diagnostics


def _made(method: str, factors: tuple[Factor, ...], coded: np.ndarray, info: dict) -> Design:
    """The :class:`~xdoe.design.Design` of a coded matrix (:func:`coded_design`)."""
    factors, points, scale = coded_design(factors, coded)
    note = resolution_note(info)
    return Design(factors, method, f"{method}: {len(points)} points" + (f", {note}" if note else ""), points,
                  scale=scale, info=info)


def fractional_factorial(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
                         seed: np.random.SeedSequence | int = 0) -> Design:
    """A regular two-level fraction 2^(k-p): by ``resolution`` (3, 4 or 5;
    default 4) the minimum-aberration fraction of the fewest runs from the
    catalogue (Chen, Sun & Wu 1993; Xu 2009; NIST/SEMATECH e-Handbook
    5.3.3.4.7), by ``generators`` (``"a b c ab ac"``) pyDOE's ``fracfact``;
    ``center`` centre points last (continuous factors only).

    Args:
        factors: two-level (``levels: [low, high]``) or continuous factors.
        spec: ``{"resolution": R}`` or ``{"generators": G}``, and ``center``.
        seed: unused (nothing is drawn).

    Returns:
        A :class:`~xdoe.design.Design` (method ``fractional_factorial``),
        rows in Yates order of the basic factors (by generators: pyDOE's);
        ``info``: generators, resolution, requested resolution, word-length
        pattern and source.

    Raises:
        DesignError: a factor of other than two levels, fewer than two
            factors, no catalogue fraction, generators that do not match the
            factors, or centre points with categorical factors.
    """
    factors = check_factors(factors)
    return _made("fractional_factorial", factors, *_fractional(factors, spec_of("fractional_factorial", spec)))


def plackett_burman(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
                    seed: np.random.SeedSequence | int = 0) -> Design:
    """The Plackett-Burman design (Plackett & Burman 1946; pyDOE ``pbdesign``)
    of the fewest runs (a multiple of four) for ``factors``; ``center``
    centre points last.

    Args:
        factors: two-level or continuous factors.
        spec: ``{"center": c}`` (default 0).
        seed: unused (nothing is drawn).

    Returns:
        A :class:`~xdoe.design.Design` (method ``plackett_burman``) of 4, 8,
        12, 16, 20, 24, 32, ... runs (pyDOE builds 2^e, 12 x 2^e, 20 x 2^e).

    Raises:
        DesignError: no factor, a factor of other than two levels, no
            pyDOE design of that size, or centre points with categorical factors.
    """
    factors = check_factors(factors)
    return _made("plackett_burman", factors, *_plackett_burman(factors, spec_of("plackett_burman", spec)))


def central_composite(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
                      seed: np.random.SeedSequence | int = 0) -> Design:
    """The central composite design (Box & Wilson 1951; pyDOE ``ccdesign``):
    the 2^k cube, ``2 k`` axial points at ``±alpha`` and ``center`` centre
    points (default 4) split between the cube and the axial block.

    Args:
        factors: two or more continuous factors.
        spec: ``face`` (``circumscribed``, ``inscribed``, ``faced``),
            ``alpha`` (``rotatable``: ``(2^k)^(1/4)``; ``orthogonal``), ``center``.
        seed: unused (nothing is drawn).

    Returns:
        A :class:`~xdoe.design.Design` (method ``central_composite``) in
        pyDOE's order; a circumscribed design widens each factor to its axial
        points (``scale`` is alpha); ``info``: model (quadratic), face, alpha, alpha_value, center.

    Raises:
        DesignError: a factor with levels, or fewer than two factors.
    """
    factors = check_factors(factors)
    return _made("central_composite", factors, *_central_composite(factors, spec_of("central_composite", spec)))


def box_behnken(factors: Sequence[Factor], spec: DesignSpec | Mapping[str, Any] | None = None,
                seed: np.random.SeedSequence | int = 0) -> Design:
    """The Box-Behnken design of 3 to 7 continuous factors, from Box &
    Behnken's (1960) table (:data:`BOX_BEHNKEN`), ``center`` centre points
    last (default 3).

    Args:
        factors: three to seven continuous factors.
        spec: ``{"center": c}``.
        seed: unused (nothing is drawn).

    Returns:
        A :class:`~xdoe.design.Design` (method ``box_behnken``) of 12, 24,
        40, 48 or 56 points plus the centre points; ``info`` ``{"model": "quadratic", "center"}``.

    Raises:
        DesignError: a factor with levels, or fewer than 3 or more than 7 factors.
    """
    factors = check_factors(factors)
    return _made("box_behnken", factors, *_box_behnken(factors, spec_of("box_behnken", spec)))


def _widen(f: Factor, a: float) -> Factor:
    """``f`` with its range stretched from the cube ``[-1, 1]`` to ``[-a, a]``
    (coded), in its scale."""
    low, high = float(f.low), float(f.high)  # type: ignore[arg-type]
    if f.scale == "log":
        c, h = (math.log(low) + math.log(high)) / 2, (math.log(high) - math.log(low)) / 2
        new_low, new_high = math.exp(c - a * h), math.exp(c + a * h)
    else:
        c, h = (low + high) / 2, (high - low) / 2
        new_low, new_high = c - a * h, c + a * h
    return Factor(f.name, low=new_low, high=new_high, scale=f.scale, integer=f.integer, when=f.when)


def coded_design(factors: Sequence[Factor], coded: np.ndarray) -> tuple[tuple[Factor, ...], np.ndarray, tuple[float, ...]]:
    """``(factors, points, scale)`` of a coded matrix: the design's factors
    (continuous ones widened when a coded value exceeds 1), its points (level
    indices / unit positions) and per factor the coded value of unit position 1
    (``coded = (2 u - 1) * scale``).

    Raises:
        DesignError: a two-level factor at a coded value other than ±1.
    """
    coded = np.asarray(coded, float)
    out_factors, scales = [], []
    points = np.empty_like(coded)
    for j, f in enumerate(factors):
        col = coded[:, j]
        if f.levels is not None:  # level i of k at coded 2 i / (k - 1) - 1 (two levels: -1 and +1)
            k = len(f.levels)
            index = (col + 1) / 2 * (k - 1)
            if not np.all((np.abs(index - np.round(index)) < 1e-9) & (index > -1e-9) & (index < k - 1 + 1e-9)):
                raise DesignError(f"factor {f.name!r} has levels, but the design needs it at coded values other "
                                  "than its levels' (centre or axial points): give it a range")
            points[:, j] = np.round(index)
            out_factors.append(f)
            scales.append(1.0)
            continue
        a = max(1.0, float(np.abs(col).max()) if len(col) else 1.0)
        a = 1.0 if abs(a - 1.0) < 1e-12 else a
        out_factors.append(f if a == 1.0 else _widen(f, a))
        points[:, j] = np.clip((col / a + 1) / 2, 0.0, 1.0)
        scales.append(a)
    return tuple(out_factors), points, tuple(scales)
