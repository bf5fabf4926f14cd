"""What the analysis knows of the design: its method, every design point's
coded values and every factor's coding (natural value at coded -1 and +1).

From the manifest ``xgen`` wrote (``design.doe``, :func:`read_design`) when
the output folder is known; else inferred from the runs (:func:`infer_design`):
a factor with two values is two-level (the smaller value, or the first in
sorted order, is ``-1``); a numeric factor with more values is coded so that
its smallest and largest values are ``-1`` and ``+1`` (in log space when every
value is positive and the middle value is the geometric, not the arithmetic,
mean of the extremes). The natural units of results do not depend on that
choice; a factor's sign does (``high - low``), so the manifest is preferred.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_design", "infer_design", "coded_frame", "natural", "TWO_LEVEL", "SURFACE", "SENSITIVITY"]

TWO_LEVEL = ("fractional_factorial", "plackett_burman")
SURFACE = ("central_composite", "box_behnken")
SENSITIVITY = ("morris", "saltelli")


def read_design(output_dir: Path | None, experiment: str | None) -> dict[str, Any] | None:
    """``{"method", "coding", "factors", ...}`` of the manifest of
    ``experiment`` in ``output_dir`` (:func:`xdoe._files.manifest_design`):
    a ``design:`` mapping's ``info``, ``points`` and ``blocks`` too; ``None``
    without a manifest that records a coding."""
    from xdoe._files import manifest_design

    return manifest_design(output_dir, experiment)


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def infer_design(table: "pd.DataFrame", factors: list[str]) -> dict[str, Any] | None:
    """A coding of ``factors`` read off the runs (see the module docstring) and
    the method class it suggests: ``two_level`` when every factor has two values
    (besides a common centre value), ``surface`` when every factor is numeric
    with three or more values, else ``None``."""
    coding: dict[str, dict[str, Any]] = {}
    kinds = []
    for f in factors:
        col = table[f]
        if col.isna().any():
            return None
        values = sorted(col.unique(), key=lambda v: (str(type(v)), v))
        if len(values) < 2:
            return None
        if len(values) == 2:
            coding[f] = {"minus": values[0], "plus": values[1]}
            kinds.append("two")
            continue
        if not _numeric(values):
            return None
        low, high = float(values[0]), float(values[-1])
        mid = float(np.median(values))
        scale = "linear"
        if low > 0 and abs(mid - math.sqrt(low * high)) < abs(mid - (low + high) / 2):
            scale = "log"
        coding[f] = {"minus": low, "plus": high, "scale": scale}
        kinds.append("more")
    if all(k == "two" for k in kinds):
        method = "two_level"
    elif all(k == "more" for k in kinds):
        method = "surface"
    else:
        centre_two = [f for f, k in zip(factors, kinds) if k == "more"]
        # two-level factors with centre points: three values, the middle one only in centre runs
        # (where every such factor is at its middle value and the others at one of their two)
        method = None
        if all(table[f].nunique() == 3 for f in centre_two):
            middle = {f: sorted(table[f].unique())[1] for f in centre_two}
            at_middle = [table[f] == m for f, m in middle.items()]
            method = "two_level" if all((m == at_middle[0]).all() for m in at_middle) else None
    return None if method is None else {"method": method, "coding": coding, "inferred": True}


def _code(value: Any, rule: dict[str, Any]) -> float:
    if "levels" in rule:
        levels = rule["levels"]
        k = len(levels)
        return 2 * levels.index(value) / (k - 1) - 1 if k > 1 else 0.0
    minus, plus = rule["minus"], rule["plus"]
    if "scale" not in rule:  # two-level
        if value == plus:
            return 1.0
        if value == minus:
            return -1.0
        return 0.0
    x, lo, hi = float(value), float(minus), float(plus)
    if rule["scale"] == "log":
        x, lo, hi = math.log(x), math.log(lo), math.log(hi)
    return (2 * x - lo - hi) / (hi - lo)


def natural(coded: float, rule: dict[str, Any]) -> float:
    """The natural value of a continuous factor's ``coded`` value."""
    lo, hi = float(rule["minus"]), float(rule["plus"])
    if rule.get("scale") == "log":
        return math.exp((math.log(lo) + math.log(hi)) / 2 + coded * (math.log(hi) - math.log(lo)) / 2)
    return (lo + hi) / 2 + coded * (hi - lo) / 2


def coded_frame(table: "pd.DataFrame", factors: list[str], design: dict[str, Any]) -> "pd.DataFrame":
    """``(runs, factors)`` float frame of coded values: the manifest's value of
    each run's design point where it lists the point, else from the coding."""
    import pandas as pd

    points = design.get("points")
    coding = design["coding"]
    rows = []
    for _, run in table.iterrows():
        index = int(run["design_point"])
        if points is not None and 0 <= index < len(points) and all(
                points[index]["natural"].get(f) == run[f] for f in factors):
            order = design.get("factors") or list(coding)  # the points' order (the manifest sorts coding's keys)
            rows.append([points[index]["coded"][order.index(f)] for f in factors])
        else:
            rows.append([_code(run[f], coding[f]) for f in factors])
    return pd.DataFrame(rows, columns=factors, index=table.index, dtype=float)
