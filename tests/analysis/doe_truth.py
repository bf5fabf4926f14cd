"""Known-truth campaigns for the DoE toolbox (issues 24 and 37): each runs
:class:`~xdoe.components.environments.FunctionEnvironment` of one of the
functions below (``*_truth``), one step per episode.

:func:`screening_truth` pays, at the one step of each episode,

    reward = 10 + 3 a - 2 c + 1.5 f + N(0, 0.25^2)

over seven two-level factors ``a .. g`` (levels 0 and 1), so the effects
(high - low) are ``a: +3, c: -2, f: +1.5`` and zero for ``b, d, e, g``.

:func:`surface_truth` pays

    reward = 50 - (x1 - 3)^2 - 2 (x2 - 7)^2 + 0.5 (x1 - 3)(x2 - 7) + N(0, 0.1^2)

over ``x1`` in [1, 5] and ``x2`` in [5, 9]: a maximum of 50 at (3, 7), the
centre of the region. (Not ``y``: a factor named ``y`` collides with the
response column of ``xdoe.analysis._response.run_table``.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dummy_study import known_truth_study

SCREENING = {"a": 3.0, "c": -2.0, "f": 1.5}
FACTORS = "abcdefg"
STATIONARY = {"x1": 3.0, "x2": 7.0}
MAXIMUM = 50.0


def screening_truth(**levels: float) -> float:
    return 10.0 + sum(effect * float(levels.get(name, 0)) for name, effect in SCREENING.items())


def surface_truth(x1: float, x2: float) -> float:
    dx, dy = x1 - 3.0, x2 - 7.0
    return MAXIMUM - dx * dx - 2.0 * dy * dy + 0.5 * dx * dy


#: the planted three-factor interaction of :func:`interaction_truth` (its effect, high - low, is 2 x this)
THREE_WAY = 1.5


def interaction_truth(**levels: float) -> float:
    """``10 + 1.5 x1 x2 x3`` over five factors ``x1 .. x5`` at -1 and +1: one
    three-factor interaction, no main effect, no two-factor interaction, no block effect."""
    return 10.0 + THREE_WAY * float(levels["x1"]) * float(levels["x2"]) * float(levels["x3"])


def saddle_truth(x1: float, x2: float) -> float:
    """``50 - (x1 - 3)^2 + (x2 - 7)^2``: a saddle at (3, 7), the centre of ``x1`` in [1, 5], ``x2`` in [5, 9]."""
    return 50.0 - (float(x1) - 3.0) ** 2 + (float(x2) - 7.0) ** 2


#: the planted slope of :func:`slope_truth` per natural unit; x1 in [1, 3] (coded x1 - 2) and x2 in
#: [0, 4] (coded (x2 - 2) / 2), so the coded first-order coefficients are b1 = 1.5, b2 = -1.0
SLOPE = {"x1": 1.5, "x2": -0.5}


def slope_truth(x1: float, x2: float) -> float:
    """A plane that keeps climbing along (b1, b2) = (1.5, -1.0) in coded units, far past the design's cube."""
    return 10.0 + SLOPE["x1"] * x1 + SLOPE["x2"] * x2


#: the true maximum of :func:`quartic_truth` (coded units)
QUARTIC_AT = (0.3, 0.2)


def quartic_truth(x1: float, x2: float) -> float:
    """``50 - 6 r^4`` (``r`` the coded distance from (0.3, 0.2)): a flat-topped
    peak that a second-order model fits at the design points of a central
    composite design (they lie nearly on one circle) but misplaces and
    overshoots in between."""
    c1, c2 = (x1 - 3.0) / 2 - QUARTIC_AT[0], (x2 - 7.0) / 2 - QUARTIC_AT[1]
    return MAXIMUM - 6.0 * (c1 * c1 + c2 * c2) ** 2


#: the planted means of :func:`categorical_truth`: ``a`` by level, ``b`` (levels ``[2, 1]``, low 2) -1 at 2, +1 at 1
CATEGORICAL = {"lo": 0.0, "mid": 2.0, "hi": 5.0}


def categorical_truth(a: str, b: float, c: str) -> float:
    """``3 + CATEGORICAL[a] + (1 if b == 1 else -1)``; ``c`` has no effect. Noise-free (a deterministic simulation)."""
    return 3.0 + CATEGORICAL[a] + (1.0 if float(b) == 1.0 else -1.0)


def categorical_document() -> dict[str, Any]:
    """A full factorial of a three-level factor in a non-sorted order, a two-level one listed high value first
    and one with no effect, two repetitions, no noise."""
    return _document("categorical", "categorical_truth",
                     {"a": {"levels": ["lo", "mid", "hi"]}, "b": {"levels": [2, 1]}, "c": {"levels": ["x", "y"]}},
                     0.0, "full_factorial", episodes=1, repetitions=2)


def _document(uid: str, function: str, factors: dict, noise: float, design: Any, episodes: int,
              repetitions: int = 1) -> dict[str, Any]:
    """:func:`known_truth_study` of ``doe_truth:<function>`` (seed 11), each factor a parameter."""
    return known_truth_study(uid, f"doe_truth:{function}", factors, design, noise=noise, seed=11,
                             repetitions=repetitions, episodes=episodes)


def screening_document(design: Any = None) -> dict[str, Any]:
    """Seven two-level factors, a 16-run resolution IV fraction by default."""
    return _document("screen", "screening_truth", {n: {"levels": [0, 1]} for n in FACTORS}, 0.25,
                                          design or {"method": "fractional_factorial", "resolution": 4}, episodes=4)


def surface_document(design: Any = None) -> dict[str, Any]:
    """Two continuous factors, a rotatable central composite design by default."""
    return _document("surface", "surface_truth", {"x1": {"range": [1, 5]}, "x2": {"range": [5, 9]}}, 0.1,
                                          design or {"method": "central_composite", "center": 4}, episodes=4)


def interaction_document(design: Any = None) -> dict[str, Any]:
    """Five factors at -1/+1, an 8-run resolution III fraction (D = AB, E = AC) by default."""
    names = ["x1", "x2", "x3", "x4", "x5"]
    return _document("three-way", "interaction_truth", {n: {"levels": [-1, 1]} for n in names}, 0.25,
                                          design or {"method": "fractional_factorial", "generators": "a b c ab ac"}, episodes=4)


def saddle_document() -> dict[str, Any]:
    """Two continuous factors around a saddle, a rotatable central composite design."""
    doc = _document("saddle", "saddle_truth", {"x1": {"range": [1, 5]}, "x2": {"range": [5, 9]}}, 0.1,
                    {"method": "central_composite", "center": 4}, episodes=4)
    return doc


def reversed_screening_document() -> dict[str, Any]:
    """:func:`screening_document` with ``a`` listed high level first (``levels: [1, 0]``): its
    effect, high - low by the document's order, is -3."""
    doc = screening_document()
    doc["uid"] = "reversed"
    doc["factors"]["a"] = {"levels": [1, 0]}
    return doc


def slope_document(repetitions: int = 2) -> dict[str, Any]:
    """Two factors with ranges on the planted slope: a 2^2 factorial with 3 centre points."""
    return _document("slope", "slope_truth", {"x1": {"range": [1, 3]}, "x2": {"range": [0, 4]}}, 0.1,
                     {"method": "fractional_factorial", "center": 3}, episodes=4,
                     repetitions=repetitions)


def quartic_document() -> dict[str, Any]:
    """Two continuous factors on the flat-topped quartic peak, a rotatable central composite design."""
    return _document("quartic", "quartic_truth", {"x1": {"range": [1, 5]}, "x2": {"range": [5, 9]}}, 0.1,
                     {"method": "central_composite", "center": 4}, episodes=4)


def run_folder(out: Path, files: list[Path] | None = None) -> str:
    """Run ``files`` (default: every run file of ``out``) into ``out/xrun.sqlite``; returns the store URL."""
    from xdoe.execution import run
    from xdoe.store import Store

    url = f"sqlite:///{out / 'xrun.sqlite'}"
    with Store(url) as store:
        for path in files if files is not None else sorted(out.glob("run-*.yaml")):
            result = run(path, store=store, results=out / "results")
            assert result.ok, result.error
    return url


def corner_truth(a: float, b: float) -> float:
    """``10 + 4 a - 3 b`` over ``a``, ``b`` in {0, 1}; the corner ``a = b = 1`` raises (its runs fail)."""
    if float(a) == 1.0 and float(b) == 1.0:
        raise RuntimeError("the corner a = b = 1 fails")
    return 10.0 + 4.0 * float(a) - 3.0 * float(b)


def corner_document() -> dict[str, Any]:
    """A 2^2 full factorial, three repetitions, whose corner ``a = b = 1`` fails in every run."""
    return _document("corner", "corner_truth", {"a": {"levels": [0, 1]}, "b": {"levels": [0, 1]}}, 0.25,
                     "full_factorial", episodes=2, repetitions=3)


#: the planted main effects of :func:`lost_corners_truth` (high - low in natural units)
LOST_CORNERS = {"a": 4.0, "b": -3.0, "c": 2.0}


def lost_corners_truth(a: float, b: float, c: float) -> float:
    """``10 + 4 a - 3 b + 2 c`` over ``a``, ``b``, ``c`` in {0, 1}; every run with
    ``a = 1`` and ``b = 1`` or ``c = 1`` fails: of ``a = 1`` only ``(b, c) = (0, 0)``
    is left, so the runs are unbalanced and ``a``'s level means are biased."""
    if float(a) == 1.0 and (float(b) == 1.0 or float(c) == 1.0):
        raise RuntimeError("the corners a = 1, b = 1 or c = 1 fail")
    return 10.0 + sum(LOST_CORNERS[k] * float(v) for k, v in (("a", a), ("b", b), ("c", c)))


def lost_corners_document() -> dict[str, Any]:
    """A 2^3 full factorial, two repetitions; three of its eight settings fail in every run.
    ``c`` lists its levels high first (``[1, 0]``): its low level is 1, its effect
    high - low is ``-2``."""
    return _document("lost-corners", "lost_corners_truth",
                     {"a": {"levels": [0, 1]}, "b": {"levels": [0, 1]}, "c": {"levels": [1, 0]}}, 0.5,
                     "full_factorial", episodes=2, repetitions=2)


def nested_truth(kind: str, k: float, x1: float | None = None) -> float:
    """``kind`` ``peak``: ``10 - 4 (x1 - 2)^2 + k``; ``flat``: ``6 + k`` (``x1`` applies to ``peak`` only)."""
    if str(kind) == "peak":
        return 10.0 - 4.0 * (float(x1) - 2.0) ** 2 + float(k)
    return 6.0 + float(k)


def nested_document() -> dict[str, Any]:
    """``kind`` (the environment: ``flat`` or ``peak``) x ``k`` in {0, 1}, ``x1`` in {1, 2, 3} when
    ``kind`` is ``peak``: 8 design points, three repetitions, noise 0.3. ``k``'s effect is +1 on both."""
    def environment(kind: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"environment": {"name": "xdoe.components.environments:FunctionEnvironment", "uid": "f",
                                "params": {"function": "doe_truth:nested_truth", "kind": kind, **params,
                                           "noise": 0.3}}}

    doc = _document("nested", "nested_truth", {"x1": {"levels": [1, 2, 3], "when": {"kind": ["peak"]}},
                                              "k": {"levels": [0, 1]}}, 0.3, "full_factorial", episodes=2,
                    repetitions=3)
    doc["definitions"]["environments"] = {"peak": environment("peak", {"x1": "${x1}", "k": "${k}"}),
                                          "flat": environment("flat", {"k": "${k}"})}
    (phase,) = doc["schedule"][0].values()
    phase["environments"] = {"name": "kind", "levels": [["flat"], ["peak"]]}
    return doc
