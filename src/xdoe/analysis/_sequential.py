"""The two model-driven steps of response-surface methodology (issue 37,
item 3): the path of steepest ascent after a first-order fit and
confirmation runs at the predicted optimum, placed by ``xgen augment
--steepest-ascent N [--step S]`` and ``--confirm N`` and answered by ``xrun
analyze``.

Both read the one model of :func:`xdoe.analysis._doe.doe_analysis`, fitted
on the design's own blocks only: the runs of a steepest-ascent or
confirmation block never enter it (:func:`split_sequential`).

* **Steepest ascent** (Box & Wilson 1951; Montgomery, *Design and Analysis of
  Experiments*, 8th ed., 2012, 11.2): with ``b_j`` the first-order
  coefficients in coded units (the two-level screening model's main
  effects / 2, :func:`xdoe.analysis._screening.screening`), the path from the
  design centre moves every factor in proportion to its coefficient; the
  factor with the largest ``|b_j|`` moves ``S`` coded units per step:
  ``x_j(k) = k S b_j / max|b|``, ``k = 1..N`` (steepest descent,
  ``-b``, when the response is minimised). Factors with a range move, and
  so do factors of two numeric levels listed low first (as the range between
  them: :func:`xdoe.design.movable_levels`); any other factor with
  ``levels:`` (categorical, or numeric listed high first) is held at its
  better level (``+1`` when ``b_j`` points up the path, else ``-1``) and left
  out of ``max|b|``. Points may
  leave the design's cube ``[-1, 1]``: that is the point of the path;
  each step records whether it does (``outside``).
* **Confirmation** (the confirmation experiment of Montgomery 2012 and of
  Myers, Montgomery & Anderson-Cook, *Response Surface Methodology*, 4th
  ed., 2016; the canonical analysis of 11.3 finds the stationary point): ``N``
  runs at the predicted optimum: the stationary point of the second-order
  model when it is a maximum (a minimum when minimising) inside the design
  region, else the design point with the best predicted response (a
  two-level design: always its best predicted setting). ``xrun analyze``
  compares their mean with the 95 % prediction interval of one new run at
  that point from the model fitted without them (statsmodels
  ``get_prediction(...).summary_frame(alpha=0.05)``, ``obs_ci_lower``,
  ``obs_ci_upper``): inside, ``confirmed``; outside, ``not confirmed``. With
  ``n > 1`` runs the interval of one run is wider than that of their mean:
  the verdict errs towards ``confirmed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SEQUENTIAL", "split_sequential", "steepest_path", "confirm_point", "sequential_results"]

#: the augment steps whose runs stay out of the design's model
SEQUENTIAL = ("steepest_ascent", "confirm")
#: the goals a response can have (:class:`xdoe.analysis.Goal`)
GOALS = ("maximize", "minimize")


def _kind(block: dict) -> str | None:
    how = block.get("how")
    if isinstance(how, dict):
        for key in SEQUENTIAL:
            if key in how:
                return key
    return None


def split_sequential(table: "pd.DataFrame", design: dict[str, Any] | None
                     ) -> tuple["pd.DataFrame", list[tuple[dict, "pd.DataFrame"]]]:
    """``(the design's runs, [(block record, its runs)])``: the runs of every
    steepest-ascent or confirmation block (by their design points) apart."""
    blocks = [b for b in (design or {}).get("blocks") or [] if _kind(b)]
    if not blocks:
        return table, []
    points = table["design_point"].astype(int)
    out, keep = [], np.ones(len(table), bool)
    for b in blocks:
        first, n = int(b["first_point"]), int(b["points"])
        mask = ((points >= first) & (points < first + n)).to_numpy()
        out.append((b, table[mask]))
        keep &= ~mask
    return table[keep], out


def steepest_path(doe: dict[str, Any] | None, factors: list[str], steps: int, step: float = 1.0,
                  goal: str = "maximize") -> dict[str, Any]:
    """The path of steepest ascent (descent when ``goal`` is ``minimize``)
    from the first-order coefficients of ``doe`` (see the module docstring).

    Returns:
        ``{"b": {factor: b_j}, "moving": [...], "held": {factor: ±1},
        "direction": {factor: unit vector}, "step", "steps", "goal",
        "coded": [{factor: x_j(k)}] (k = 1..steps), "outside": [k, ...]}``.

    Raises:
        InputError: not a two-level design's screening model, no factor with a
            range, or every coefficient of a moving factor zero.
    """
    if doe is None or doe.get("analysis") != "screening":
        what = "none (not a two-level design)" if doe is None else doe.get("analysis")
        raise InputError("--steepest-ascent needs the first-order model of a two-level design (the screening "
                         f"model's main effects); this design's analysis is {what}")
    if goal not in GOALS:
        raise InputError(f"goal {goal!r}: expected one of {', '.join(GOALS)}")
    if not step > 0:
        raise InputError(f"--step {step}: expected a positive number of coded units")
    sign = 1.0 if goal == "maximize" else -1.0
    mains = {r["name"]: r["effect"] / 2 for r in doe["effects"] if r["kind"] == "main"}
    coding = doe["coding"]
    b = {f: float(mains[f]) for f in factors}
    from xdoe.design import movable_levels

    # a range, or two numeric levels listed low first (moved as the range between them); other levels: held
    moving = [f for f in factors if "scale" in coding[f] or movable_levels([coding[f].get("minus"),
                                                                            coding[f].get("plus")])]
    if not moving:
        raise InputError("--steepest-ascent: no factor can move off its levels (categorical levels, or numeric ones "
                         "listed high first); give the factors to move a range: [low, high] or two numeric levels "
                         "low first")
    vec = np.array([sign * b[f] for f in moving])
    big = float(np.max(np.abs(vec)))
    if not big > 0:
        raise InputError("--steepest-ascent: every first-order coefficient of the factors with a range is zero: "
                         "no direction to move in")
    held = {f: (1.0 if sign * b[f] > 0 else -1.0) for f in factors if f not in moving}
    delta = step * vec / big
    coded, outside = [], []
    for k in range(1, steps + 1):
        point = {**{f: float(k * d) for f, d in zip(moving, delta)}, **held}
        coded.append({f: point[f] for f in factors})
        if np.max(np.abs(k * delta)) > 1 + 1e-12:
            outside.append(k)
    return {"goal": goal, "steps": int(steps), "step": float(step), "b": b, "moving": moving, "held": held,
            "direction": {f: float(v) for f, v in zip(moving, vec / np.linalg.norm(vec))},
            "coded": coded, "outside": outside}


def _model_row(doe: dict[str, Any], point: dict[str, float], factors: list[str]) -> np.ndarray | None:
    """The model's row at ``point`` (coded; the first block), ``None`` where
    the model cannot predict (a two-level design: a setting it did not run)."""
    if doe["analysis"] == "surface":
        from xdoe.analysis._surface import _matrix

        _, _, width = doe["_fit"]
        row = _matrix(np.array([[point[f] for f in factors]], float), None)
        return np.column_stack([row, np.zeros((1, width - row.shape[1]))])[0]
    _, rows = doe["_fit"]
    return rows.get(tuple(float(point[f]) for f in factors))


def _predict(doe: dict[str, Any], row: np.ndarray) -> dict[str, Any]:
    """Fitted mean, its 95 % CI and the 95 % prediction interval of one new
    run (statsmodels ``summary_frame``); intervals ``None`` without residual df."""
    import warnings

    fit = doe["_fit"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = fit.get_prediction(row[None, :]).summary_frame(alpha=0.05)
    mean = float(frame["mean"].iloc[0])
    if not float(fit.df_resid) >= 1:
        return {"predicted": mean, "ci": None, "pi": None}
    return {"predicted": mean, "ci": [float(frame["mean_ci_lower"].iloc[0]), float(frame["mean_ci_upper"].iloc[0])],
            "pi": [float(frame["obs_ci_lower"].iloc[0]), float(frame["obs_ci_upper"].iloc[0])]}


def confirm_point(doe: dict[str, Any] | None, factors: list[str], goal: str = "maximize") -> dict[str, Any]:
    """Where confirmation runs go (see the module docstring).

    Returns:
        ``{"goal", "at": "stationary point" | "best predicted design point",
        "why", "coded": {factor: value}, "predicted", "pi"}``.

    Raises:
        InputError: the design has no screening or second-order model.
    """
    if doe is None or doe.get("analysis") not in ("screening", "surface"):
        what = "none" if doe is None else doe.get("analysis")
        raise InputError("--confirm needs a two-level (screening) or response-surface (second-order) model to "
                         f"predict the optimum; this design's analysis is {what}")
    if goal not in GOALS:
        raise InputError(f"goal {goal!r}: expected one of {', '.join(GOALS)}")
    want = "maximum" if goal == "maximize" else "minimum"
    if doe["analysis"] == "surface" and doe.get("stationary_coded") is not None:
        if doe["kind"] == want and doe["inside"]:
            point = {f: float(doe["stationary_coded"][f]) for f in factors}
            return {"goal": goal, "at": "stationary point", "why": f"the stationary point is a {want} inside the "
                    "design region", "coded": point, **_predict(doe, _model_row(doe, point, factors))}  # type: ignore[arg-type]
        why = (f"the stationary point is a {doe['kind']}" if doe["kind"] != want
               else "the stationary point lies outside the design region")
    elif doe["analysis"] == "surface":
        why = "the quadratic part is singular: no stationary point"
    else:
        why = "a two-level design's model predicts at its design points only"
    settings = ([tuple(float(v) for v in r) for r in doe["_coded"][factors].to_numpy(float)]
                if doe["analysis"] == "surface" else list(doe["_fit"][1]))
    best: tuple[float, dict] | None = None
    for s in dict.fromkeys(settings):
        point = dict(zip(factors, s))
        row = _model_row(doe, point, factors)
        if row is None:
            continue
        value = float(row @ np.asarray(doe["_fit"][0].params))
        if best is None or (value > best[0] if goal == "maximize" else value < best[0]):
            best = (value, point)
    assert best is not None
    point = best[1]
    return {"goal": goal, "at": "best predicted design point", "why": why, "coded": point,
            **_predict(doe, _model_row(doe, point, factors))}  # type: ignore[arg-type]


def _coded_of(design: dict[str, Any], block: dict, factors: list[str]) -> list[dict[str, float]]:
    order = design.get("factors") or list(design.get("coding") or {})
    points = design.get("points") or []
    first = int(block["first_point"])
    return [{f: float(points[i]["coded"][order.index(f)]) for f in factors}
            for i in range(first, first + int(block["points"])) if i < len(points)]


def sequential_results(doe: dict[str, Any], design: dict[str, Any], factors: list[str],
                       parts: list[tuple[dict, "pd.DataFrame"]]) -> dict[str, Any]:
    """``{"steepest_ascent": {...}, "confirmation": {...}}`` of the
    sequential blocks' runs (:func:`split_sequential`): the path per step
    (its block, coded and natural settings, runs, mean response; every
    steepest-ascent block's steps, the direction of the last) and the last
    confirmation block's ``n`` and ``mean`` against the prediction interval
    of ``doe``'s model (fitted without them); with several confirmation
    blocks ``confirmations`` lists each."""
    out: dict[str, Any] = {}
    for block, runs in parts:
        how = block["how"]
        coded = _coded_of(design, block, factors)
        if "steepest_ascent" in how:
            spec = how["steepest_ascent"]
            rows = []
            for k, point in enumerate(coded, 1):
                mine = runs[runs["design_point"].astype(int) == int(block["first_point"]) + k - 1]
                natural = {f: (mine[f].iloc[0] if len(mine) else None) for f in factors}
                rows.append({"step": k, "coded": point, "natural": natural, "n": int(len(mine)),
                             "mean": float(mine["y"].mean()) if len(mine) else None,
                             "outside": bool(max(abs(v) for v in point.values()) > 1 + 1e-9)})
            for r in rows:
                r["block"] = int(block["block"])
            earlier = out.get("steepest_ascent", {}).get("path", [])
            out["steepest_ascent"] = {"block": int(block["block"]), "goal": spec.get("goal", "maximize"),
                                      "step": spec.get("step"), "direction": spec.get("direction"),
                                      "b": spec.get("b"), "held": spec.get("held"), "path": earlier + rows,
                                      "fitted_on": "the design's own blocks (the path's runs are not in the model)"}
            continue
        spec = how["confirm"]
        point = coded[0] if coded else {f: float(v) for f, v in spec["coded"].items()}
        row = _model_row(doe, point, factors)
        pred = _predict(doe, row) if row is not None else {"predicted": None, "ci": None, "pi": None}
        n = int(len(runs))
        mean = float(runs["y"].mean()) if n else None
        pi = pred["pi"]
        if not n:
            verdict = "not run yet"
        elif pi is None:
            verdict = ("no prediction interval (no residual degrees of freedom)" if row is not None
                       else "no prediction interval (the model does not predict at this setting)")
        else:
            verdict = "confirmed" if pi[0] <= mean <= pi[1] else "not confirmed"  # type: ignore[operator]
        natural = {f: (runs[f].iloc[0] if n else None) for f in factors}
        if "confirmation" in out:  # an earlier confirmation block: every one listed, the last one answers
            out.setdefault("confirmations", [out["confirmation"]])
        out["confirmation"] = {"block": int(block["block"]), "at": spec.get("at"), "goal": spec.get("goal"),
                               "coded": point, "natural": natural, "n": n, "mean": mean,
                               "predicted": pred["predicted"], "pi": pi, "verdict": verdict,
                               "interval": "95 % prediction interval of one new run, from the model fitted "
                                           "without the confirmation runs"}
        if "confirmations" in out:
            out["confirmations"].append(out["confirmation"])
    return out
