"""The ``design:`` key: a method name, or a mapping ``{method: ..., <options>}``.

::

    design: maximin                                          # today's names
    design: {method: fractional_factorial, resolution: 4, center: 3}
    design: {method: fractional_factorial, generators: "a b c ab ac"}
    design: {method: plackett_burman}
    design: {method: central_composite, face: circumscribed, alpha: rotatable, center: 4}
    design: {method: box_behnken, center: 3}
    design: {method: sobol, n: 16}                           # or halton
    design: {method: d_optimal, runs: 12, model: interactions}
    design: {method: morris, trajectories: 10, levels: 4}    # SALib
    design: {method: saltelli, n: 64}                        # SALib
    design: {method: optuna, sampler: tpe, trials: 40, batch: 4}  # Optuna (adaptive: xrun optimize)

Pure Python (no numpy): the document model validates ``design`` with
:func:`parse_design` before any design is built.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field
from typing import Any

from xdoe.errors import DesignError

__all__ = ["DesignSpec", "parse_design", "PLAIN_METHODS", "OPTIONS", "ALL_METHODS"]

#: the names ``design:`` took before mappings (still valid as plain strings)
PLAIN_METHODS = ("auto", "full_factorial", "lhs", "maximin")

#: method -> {option: kind}; kinds: "int>=0", "int>=1", "int>=2", ("choice", values), "text" (generators),
#: "name" (a non-empty string), ("one or list", kind): that kind or a non-empty list of it
OPTIONS: dict[str, dict[str, Any]] = {
    "auto": {},
    "full_factorial": {},
    "lhs": {"n": "int>=1"},
    "maximin": {"n": "int>=1"},
    "fractional_factorial": {"resolution": ("choice", (3, 4, 5)), "generators": "text", "center": "int>=0"},
    "plackett_burman": {"center": "int>=0"},
    "central_composite": {"face": ("choice", ("circumscribed", "inscribed", "faced")),
                          "alpha": ("choice", ("rotatable", "orthogonal")), "center": "int>=0"},
    "box_behnken": {"center": "int>=0"},
    "sobol": {"n": "int>=1"},
    "halton": {"n": "int>=1"},
    "d_optimal": {"runs": "int>=1", "model": ("choice", ("linear", "interactions", "quadratic"))},
    "morris": {"trajectories": "int>=2", "levels": "int>=2"},
    "saltelli": {"n": "int>=1", "second_order": ("choice", (True, False))},
    # adaptive (docs/designs.md, "Adaptive designs: Optuna"): the first batch here, the rest by xrun optimize
    "optuna": {"sampler": ("choice", ("tpe", "cmaes", "gp", "random", "nsga2")), "trials": "int>=1",
               "batch": "int>=1", "repetitions_per_trial": "int>=1", "response": ("one or list", "name"),
               "direction": ("one or list", ("choice", ("maximize", "minimize"))),
               "stat": ("choice", ("iqm", "mean", "median")), "agent": "name", "startup_trials": "int>=0"},
}
ALL_METHODS = tuple(OPTIONS)
_GENERATOR = re.compile(r"[+-]?[a-zA-Z]+\Z")


@dataclass(frozen=True)
class DesignSpec:
    """A parsed ``design:`` value: ``method`` and its ``options`` (only the
    ones given; defaults are applied by the design functions)."""

    method: str
    options: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, **self.options}


def _check(method: str, key: str, value: Any, kind: Any) -> Any:
    if isinstance(kind, tuple) and kind[0] == "one or list":
        if isinstance(value, list):
            if not value:
                raise DesignError(f"design {method}: {key} must not be an empty list")
            return [_check(method, key, v, kind[1]) for v in value]
        return _check(method, key, value, kind[1])
    if kind == "name":
        if not isinstance(value, str) or not value.strip():
            raise DesignError(f"design {method}: {key} must be a non-empty text, got {value!r}")
        return value.strip()
    if isinstance(kind, tuple):
        values = kind[1]
        if isinstance(value, bool) != any(isinstance(v, bool) for v in values) or value not in values:
            raise DesignError(f"design {method}: {key} must be one of {', '.join(map(str, values))}, got {value!r}")
        return value
    if kind == "text":
        if not isinstance(value, str) or not value.split():
            raise DesignError(f"design {method}: {key} must be a text like \"a b c ab ac\", got {value!r}")
        bad = [w for w in value.split() if not _GENERATOR.match(w)]
        if bad:
            raise DesignError(f"design {method}: {key}: {bad[0]!r} is not a word of letters (a, ab, -abc)")
        return " ".join(value.split())
    low = int(kind[-1])
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise DesignError(f"design {method}: {key} must be an integer >= {low}, got {value!r}")
    return int(value)


#: other names of the methods a user may bring, with the method ``design:`` calls it: the Python
#: functions of :mod:`xdoe.design`, pyDOE's functions and the textbooks' abbreviations (a hint only:
#: each method has one name in a document)
SYNONYMS = {"latin_hypercube": "lhs", "lhc": "lhs", "fullfact": "full_factorial", "ff2n": "full_factorial",
            "factorial": "full_factorial", "full": "full_factorial", "fracfact": "fractional_factorial",
            "fractional": "fractional_factorial", "pbdesign": "plackett_burman", "pb": "plackett_burman",
            "ccdesign": "central_composite", "ccd": "central_composite", "bbdesign": "box_behnken",
            "bbd": "box_behnken", "d-optimal": "d_optimal", "doptimal": "d_optimal"}


def _mean(word: object, known: object) -> str:
    """``"did you mean 'x'? "`` for the method ``word`` is another name of
    (:data:`SYNONYMS`) or the closest of ``known``, or ``""``."""
    from xdoe.documents._validation import closest

    if isinstance(word, str) and word.strip().lower() in SYNONYMS:
        return f"did you mean {SYNONYMS[word.strip().lower()]!r}? "
    close = closest(word, list(known)) if isinstance(word, str) else None  # type: ignore[call-overload]
    return f"did you mean {close!r}? " if close else ""


def parse_design(value: Any) -> DesignSpec:
    """``design:`` as a :class:`DesignSpec`.

    Args:
        value: a method name (``str``), a mapping with ``method`` and that
            method's options (:data:`OPTIONS`), or a :class:`DesignSpec`.

    Raises:
        DesignError: an unknown method or option, an option of the wrong
            type, both ``resolution`` and ``generators``, or ``alpha`` with
            ``face: faced``.
    """
    if isinstance(value, DesignSpec):
        return value
    if isinstance(value, str):
        if value not in OPTIONS:
            raise DesignError(f"unknown design method {value!r}; {_mean(value, ALL_METHODS)}expected one of "
                              f"{', '.join(ALL_METHODS)}")
        return DesignSpec(value)
    if not isinstance(value, dict):
        raise DesignError(f"design must be a method name or a mapping {{method: ..., <options>}}, got {value!r}")
    method = value.get("method")
    if not isinstance(method, str) or method not in OPTIONS:
        raise DesignError(f"unknown or missing method {method!r}; {_mean(method, ALL_METHODS)}expected one "
                          f"of {', '.join(ALL_METHODS)}")
    known = OPTIONS[method]
    options = {}
    for key, item in value.items():
        if key == "method":
            continue
        if key not in known:
            allowed = ", ".join(known) or "none"
            raise DesignError(f"design {method}: unknown option {key!r}; {_mean(key, known)}options: {allowed}")
        options[key] = _check(method, key, item, known[key])
    if "resolution" in options and "generators" in options:
        raise DesignError("design fractional_factorial: give resolution or generators, not both")
    if options.get("face") == "faced" and "alpha" in options:  # its axial distance is 1, whatever alpha says
        raise DesignError(f"design central_composite: alpha: {options['alpha']} does not apply to face: faced "
                          "(its axial points lie on the cube's faces, alpha = 1); remove alpha, or choose face: "
                          "circumscribed or inscribed")
    if method == "optuna":
        if "trials" not in options:
            raise DesignError("design optuna needs trials: the number of trials (design points) to run in all")
        answers = [len(v) for k in ("response", "direction") if isinstance(v := options.get(k), list)]
        direction = options.get("direction")
        if isinstance(direction, list) and len(direction) > 1 and not isinstance(options.get("response"), list):
            raise DesignError(f"design optuna: {len(direction)} directions for one response (the same response "
                              "maximized and minimized); give one response per direction: response: "
                              "[PHASE:METRIC:STAT, ...]")
        if len(set(answers)) > 1:
            raise DesignError("design optuna: response and direction must be lists of the same length "
                              "(one direction per response)")
    return DesignSpec(method, options)
