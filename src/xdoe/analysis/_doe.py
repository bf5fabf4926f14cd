"""The analysis matched to the design (issues 24 and 32): the screening model
for two-level designs (:mod:`xdoe.analysis._screening`), the second-order
model and its canonical analysis for response-surface designs
(:mod:`xdoe.analysis._surface`), Morris and Sobol' indices for sensitivity
designs (:mod:`xdoe.analysis._sensitivity`). :func:`doe_analysis` picks one
from the design (the manifest's, the store's record, or read off the runs:
:func:`~xdoe.analysis._design_info.infer_design`); :func:`design_tables`
turns it into the factor and interaction rows, so that every number of an
output comes from that one model; any other design is answered by the type
II ANOVA (:mod:`xdoe.analysis._effects`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._design_info import SENSITIVITY, SURFACE, TWO_LEVEL, coded_frame, infer_design
from xdoe.errors import IncompleteDesignError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["doe_analysis", "block_column", "design_tables", "doe_plot_title", "plot_doe"]


def block_column(table: "pd.DataFrame", design: dict[str, Any] | None) -> "pd.Series | None":
    """The block of every run: ``design["blocks"]`` maps design points to
    blocks (an augmented design, :mod:`xdoe.design.runfiles`); ``None`` for one block."""
    import pandas as pd

    blocks = (design or {}).get("blocks")
    if not blocks:
        return None
    starts = sorted((int(b["first_point"]), int(b["block"])) for b in blocks)

    def block(point: int) -> int:
        found = 0
        for first, b in starts:
            if point >= first:
                found = b
        return found

    return pd.Series([block(int(p)) for p in table["design_point"]], index=table.index, name="block")


def _two_level_rule(rule: Any, values: "pd.Series") -> bool:
    """``rule`` codes a two-level factor and both its levels are the runs' values."""
    if not isinstance(rule, dict) or "scale" in rule or "minus" not in rule:
        return False
    present = set(values.dropna().unique())
    return rule["minus"] in present and rule["plus"] in present


def doe_analysis(table: "pd.DataFrame", factors: list[str], design: dict[str, Any] | None,
                 seed: int = 0) -> dict[str, Any] | None:
    """``{"analysis": "screening" | "surface" | "sensitivity", ...}`` or ``None``
    when the design is none of those (or inferred as none of those).

    ``screening``: :func:`~xdoe.analysis._screening.screening`; ``surface``:
    :func:`~xdoe.analysis._surface.surface`; ``sensitivity``: ``{"method",
    "indices"}`` (:func:`~xdoe.analysis._sensitivity.sensitivity`). Each also
    carries ``coding`` and ``source`` (``manifest`` or ``inferred``). The
    model is fitted on the design's own blocks: the runs of steepest-ascent
    and confirmation blocks (``xgen augment --steepest-ascent / --confirm``)
    are answered apart, ``steepest_ascent`` (the path) and ``confirmation``
    (:func:`~xdoe.analysis._sequential.sequential_results`).

    Raises:
        IncompleteDesignError: a two-level design whose runs with a score
            leave a factor's main effect without a contrast of its own.
    """
    if not factors or table[factors].isna().any().any():
        return None
    if design is None:
        design = infer_design(table, factors)
        if design is None:
            return None
    from xdoe.analysis._sequential import sequential_results, split_sequential

    table, parts = split_sequential(table, design)  # steepest-ascent and confirmation runs: not in the model
    out = _matched(table, factors, design, seed)
    if out is not None and parts and out["analysis"] in ("screening", "surface"):
        out.update(sequential_results(out, design, factors, parts))
    return out


def _matched(table: "pd.DataFrame", factors: list[str], design: dict[str, Any], seed: int) -> dict[str, Any] | None:
    method = design.get("method")
    if method == "optuna":  # the sampler's points, never a two-level design (pruning may leave two)
        return None
    if method not in (*TWO_LEVEL, *SURFACE, *SENSITIVITY, "augmented", "two_level", "surface"):
        # a design of today's names: a two-level one (every factor at two levels, perhaps a
        # centre) gets the screening model, coded as the document lists the levels; else None
        recorded = design.get("coding") or {}
        if any(isinstance(r, dict) and "levels" in r for r in recorded.values()):
            return None  # a factor of more than two levels: the ANOVA answers it
        inferred = infer_design(table, factors)
        if inferred is None or inferred["method"] != "two_level":
            return None
        coding = {f: recorded.get(f) if _two_level_rule(recorded.get(f), table[f]) else inferred["coding"][f]
                  for f in factors}
        design = {**inferred, "coding": coding, "inferred": False, "source": design.get("source")}
        method = "two_level"
    coding = design.get("coding") or {}
    if any(f not in coding for f in factors):
        return None
    source = design.get("source") or ("inferred" if design.get("inferred") else "manifest")
    coded = coded_frame(table, factors, design)
    blocks = block_column(table, design)
    if method in TWO_LEVEL or method == "two_level" or (method == "augmented" and design.get("family") == "two_level"):
        from xdoe.analysis._screening import screening

        two = [f for f in factors if "scale" not in coding[f] or set(np.unique(coded[f])) <= {-1.0, 0.0, 1.0}]
        if two != factors:
            return None
        result = screening(table, coded, factors, blocks=blocks)
        named = {r["name"] for r in result["effects"]}
        lost = [f for f in factors if f not in named]
        if lost:
            raise IncompleteDesignError(
                f"the two-level screening model cannot estimate the main effect of {', '.join(lost)} on its own "
                f"from the {result['points']} setting(s) of the factors with a finished run (runs failed or not "
                "run yet, or a block that repeats only some of the points, leave the design without orthogonal "
                "contrasts): the factors are ranked by the type II ANOVA of the runs instead")
        return {"analysis": "screening", "source": source, "coding": coding, **result}
    if method in SURFACE or method == "surface" or (method == "augmented" and design.get("family") == "surface"):
        from xdoe.analysis._surface import surface

        return {"analysis": "surface", "source": source, "coding": coding, "_coded": coded, "_factors": factors,
                **surface(table, coded, factors, coding, blocks)}
    if method in SENSITIVITY and design.get("points"):
        from xdoe.analysis._sensitivity import sensitivity

        points = design["points"]
        y = np.full(len(points), np.nan)
        for point, group in table.groupby("design_point"):
            if 0 <= int(point) < len(points):
                y[int(point)] = float(group["y"].mean())
        unit = (np.array([p["coded"] for p in points], float) + 1) / 2
        names = design.get("factors") or list(coding)
        return {"analysis": "sensitivity", "source": source, "method": method, "coding": coding,
                "indices": sensitivity(method, unit, y, names, design.get("info") or {}, seed=seed)}
    return None


def _screening_tables(doe: dict[str, Any], factors: list[str], level_rows: Any
                      ) -> tuple[list[Any], list[Any], dict[str, str]]:
    from xdoe.analysis._result import FactorEffect, Interaction

    how = ("Lenth's PSE" if doe["method"] == "lenth" else "pure-error t test") + f", df {_f(doe['df'], 3)}"
    df = [None, doe["df"]] if doe["method"] == "lenth" else [1.0, doe["df"]]
    rows = {r["name"]: r for r in doe["effects"]}
    effects = []
    for f in factors:
        r = rows[f]
        effects.append(FactorEffect(f, "two-level", level_rows(f), r["effect"], r["F"], r["p"], r["eta_sq"],
                                    active=r["active"], aliases=list(r["aliases"]), t=r["t"], df=df,
                                    method=doe["method"]))
    effects.sort(key=lambda e: (-abs(e.effect) if e.effect == e.effect else 1.0, e.name))
    inter = []
    for r in doe["effects"]:
        if r["kind"] != "interaction":
            continue
        pair = next(t for t in [r["name"], *(a.lstrip("-") for a in r["aliases"])]
                    if t.count("*") == 1 and "block" not in t.split("*"))
        inter.append(Interaction(tuple(pair.split("*")), r["F"], r["p"], r["eta_sq"], name=r["name"],
                                 effect=r["effect"], t=r["t"], active=r["active"], aliases=list(r["aliases"]),
                                 df=df, method=doe["method"]))
    inter.sort(key=lambda i: (-abs(i.effect), i.name))
    method = f"two-level screening: {how}"
    return effects, inter, {"factors": method, "interactions": method + " (one row per alias chain)"}


def _surface_tables(doe: dict[str, Any], factors: list[str], level_rows: Any
                    ) -> tuple[list[Any], list[Any], dict[str, str]]:
    from xdoe.analysis._result import FactorEffect, Interaction
    from xdoe.analysis._surface import factor_tests

    fit = doe["_fit"][0]
    tests = factor_tests(fit, len(factors))
    effects = []
    for i, f in enumerate(factors):
        F, p, df1, df2 = tests["factors"][i]
        eta = F * df1 / (F * df1 + df2) if F == F else float("nan")
        effects.append(FactorEffect(f, "continuous", level_rows(f), 2 * float(np.asarray(fit.params)[1 + i]), F, p,
                                    eta, df=[df1, df2], method="second-order model"))
    effects.sort(key=lambda e: (-(e.eta_sq if e.eta_sq == e.eta_sq else -1), e.name))
    inter = []
    for (i, j), (b, t, p, df2) in tests["interactions"].items():
        inter.append(Interaction((factors[i], factors[j]), t * t, p, t * t / (t * t + df2),
                                 name=f"{factors[i]}*{factors[j]}", effect=b, t=t, df=[1.0, df2],
                                 method="second-order model"))
    method = (f"second-order model in coded units (OLS{', blocks as a fixed effect' if doe['_fit'][1] else ''}; "
              f"residual df {_f(float(fit.df_resid), 3)})")
    return effects, inter, {"factors": method + ": joint F test of each factor's terms",
                            "interactions": method + ": t test of each b_ij"}


def _sensitivity_tables(doe: dict[str, Any]) -> tuple[list[Any], list[Any], dict[str, str]]:
    from xdoe.analysis._result import FactorEffect

    morris = doe["method"] == "morris"
    effects = [FactorEffect(r["name"], "continuous", [], r["mu_star"] if morris else r["ST"], float("nan"),
                            float("nan"), float("nan"), method="morris" if morris else "sobol")
               for r in doe["indices"]]
    effects.sort(key=lambda e: (-(e.effect if e.effect == e.effect else -1), e.name))
    method = "Morris elementary effects (SALib): effect = mu*" if morris else \
        "Sobol' indices (SALib): effect = total-order index ST"
    return effects, [], {"factors": method}


def design_tables(doe: dict[str, Any], factors: list[str], level_rows: Any
                  ) -> tuple[list[Any], list[Any], dict[str, str]]:
    """The factor and interaction rows of the analysis matched to the design,
    every number from its one model: ``(factors, interactions, methods)``.

    ``level_rows(factor)`` gives a factor's descriptive level means (low to
    high). Screening: main-effect chains and two-factor-interaction chains
    (:func:`~xdoe.analysis._screening.screening`); surface: the joint F test
    of each factor's terms and the t test of each ``b_ij`` of the
    second-order model (:func:`~xdoe.analysis._surface.factor_tests`);
    sensitivity: mu* or ST, no test."""
    kind = doe["analysis"]
    if kind == "screening":
        return _screening_tables(doe, factors, level_rows)
    if kind == "surface":
        return _surface_tables(doe, factors, level_rows)
    return _sensitivity_tables(doe)


def _f(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def _pv(p: Any) -> str:
    return "-" if p is None or not np.isfinite(p) else ("<0.0001" if p < 1e-4 else f"{p:.4f}")


def doe_sections(doe: dict[str, Any] | None, response: str, runs: int) -> list[tuple[str, list[str], list[list[str]]]]:
    """The table/CSV/Markdown sections of the analysis matched to the design."""
    if doe is None:
        return []
    kind = doe["analysis"]
    if kind == "screening":
        how = (f"Lenth's PSE {_f(doe['pse'])}, ME {_f(doe['me'])}, SME {_f(doe['sme'])}, df {_f(doe['df'], 3)}"
               if doe["method"] == "lenth" else f"pure-error t test, df {_f(doe['df'], 3)}")
        rest = [r for r in doe["effects"] if r["kind"] not in ("main", "interaction")]
        rows = [[r["name"], _f(r["effect"]), _f(r["t"], 3), _pv(r["p"]), "yes" if r["active"] else "no",
                 " = ".join(r["aliases"])] for r in sorted(rest, key=lambda r: -abs(r["effect"]))]
        out = []
        title = (f"Two-level screening model (response {response}, {doe['runs']} cube runs at {doe['points']} "
                 f"points, {doe['centre_points']} centre runs, {doe.get('blocks', 1)} block(s); {how})")
        if rows:
            out.append((f"{title}: the other contrasts (block, higher-order chains)",
                        ["contrast", "effect (high - low)", "t", "p", "active", "aliases"], rows))
        else:
            out.append((title, ["model", "value"], [["contrasts", f"{len(doe['effects'])} (main effects and "
                                                                  "interaction chains above)"]]))
        curv = doe.get("curvature")
        if curv is not None:
            out.append((f"Curvature: cube mean - centre mean (response {response}, {curv['centre_runs']} centre "
                        f"runs; the same model, {how})", ["effect", "t", "df", "p"],
                        [[_f(curv["effect"]), _f(curv["t"], 3), _f(curv["df"], 3), _pv(curv["p"])]]))
        return out + _sequential_sections(doe, response)
    if kind == "surface":
        out = [(f"Second-order model (response {response}, {doe['runs']} runs, coded units, "
                f"R² {_f(doe['r_squared'], 4)})", ["term", "estimate", "p"],
                [[t, _f(v["estimate"]), _pv(v["p"])] for t, v in doe["coefficients"].items()])]
        rows = []
        lof = doe.get("lack_of_fit")
        rows.append(["lack of fit", "-" if lof is None else f"F = {_f(lof['F'])}, p = {_pv(lof['p'])}, "
                     f"df = {_f(lof['df'][0], 3)}, {_f(lof['df'][1], 3)}"])
        if doe.get("stationary_point") is not None:
            rows.append(["stationary point (natural)", ", ".join(f"{k} = {_f(v)}" for k, v in
                                                               doe["stationary_point"].items())])
            rows.append(["stationary point (coded)", ", ".join(f"{k} = {_f(v)}" for k, v in
                                                             doe["stationary_coded"].items())])
            rows.append(["kind (eigenvalues)", f"{doe['kind']} ({', '.join(_f(e) for e in doe['eigenvalues'])})"])
            rows.append(["inside the design region", "yes" if doe["inside"] else "no"])
            rows.append(["predicted response (95 % CI)", f"{_f(doe['predicted'])} [{_f(doe['predicted_ci'][0])}, "
                                                         f"{_f(doe['predicted_ci'][1])}]"])
        else:
            rows.append(["stationary point", "none (the quadratic part is singular)"])
        out.append((f"Canonical analysis (response {response})", ["", "value"], rows))
        return out + _sequential_sections(doe, response)
    rows = doe["indices"]
    return _sensitivity_sections(doe, rows, response, runs)


def _sequential_sections(doe: dict[str, Any], response: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """The path of steepest ascent and the confirmation runs, apart from the model."""
    out = []
    model = "screening" if doe["analysis"] == "screening" else "second-order"
    path = doe.get("steepest_ascent")
    if path is not None:
        names = list(path["path"][0]["coded"]) if path["path"] else []
        rows = [[f"{r['step']} (block {r['block']})", ", ".join(f"{f} = {_f(v)}" for f, v in r["coded"].items()),
                 ", ".join(f"{f} = {_f(v) if isinstance(v, float) else v}" for f, v in r["natural"].items()),
                 str(r["n"]), _f(r["mean"]), "yes" if r["outside"] else "no"] for r in path["path"]]
        how = "descent" if path["goal"] == "minimize" else "ascent"
        out.append((f"Path of steepest {how} (block {path['block']}, response {response}, step {_f(path['step'])} "
                    f"coded units of the factor of largest |b|; {len(names)} factors): its runs are not in the "
                    f"{model} model, which is fitted on the design's own blocks only",
                    ["step", "coded", "natural", "runs", "mean response", "outside the design's cube"], rows))
    confs = doe.get("confirmations") or ([doe["confirmation"]] if doe.get("confirmation") else [])
    if confs:
        rows = [[c["verdict"], str(c["n"]), _f(c["mean"]), _f(c["predicted"]),
                 "-" if c["pi"] is None else f"[{_f(c['pi'][0])}, {_f(c['pi'][1])}]", c["at"],
                 ", ".join(f"{f} = {_f(v)}" for f, v in c["coded"].items()), str(c["block"])] for c in confs]
        out.append((f"Confirmation runs (response {response}): their mean against the 95 % prediction interval of "
                    f"one new run from the {model} model fitted without them",
                    ["verdict", "runs", "mean", "predicted", "95 % PI", "at", "coded", "block"], rows))
    return out


def _sensitivity_sections(doe: dict[str, Any], rows: list[dict], response: str, runs: int
                          ) -> list[tuple[str, list[str], list[list[str]]]]:
    if doe["method"] == "morris":
        return [(f"Morris elementary effects (response {response}, {runs} runs; SALib)",
                 ["factor", "mu*", "mu* 95 % conf", "sigma", "mu"],
                 [[r["name"], _f(r["mu_star"]), _f(r["mu_star_conf"]), _f(r["sigma"]), _f(r["mu"])] for r in rows])]
    return [(f"Sobol' indices (response {response}, {runs} runs; SALib, 95 % bootstrap half-widths)",
             ["factor", "S1", "S1 conf", "ST", "ST conf"],
             [[r["name"], _f(r["S1"]), _f(r["S1_conf"]), _f(r["ST"]), _f(r["ST_conf"])] for r in rows])]


def doe_plot_title(analysis: Any) -> str | None:
    """What :func:`plot_doe` draws for ``analysis`` (``"Half-normal plot of
    the effects"``, ``"Fitted second-order surface"``, ``"Morris mu*-sigma"``),
    or ``None`` when it draws nothing (no design analysis, a surface without
    stationary point, Sobol' indices)."""
    doe = analysis.doe
    if doe is None:
        return None
    kind = doe["analysis"]
    if kind == "screening":
        return "Half-normal plot of the effects"
    if kind == "surface" and doe.get("stationary_point") is not None:
        return "Fitted second-order surface"
    if kind == "sensitivity" and doe["method"] == "morris":
        return "Morris mu*-sigma"
    return None


def plot_doe(analysis: Any, path: Any, *, experiment: str) -> Any:
    """The plot matched to ``analysis.doe`` (half-normal, contour or
    mu*-sigma), titled with the experiment, the response and n; ``None``
    when there is none for this design."""
    doe = analysis.doe
    if doe is None:
        return None
    kind = doe["analysis"]
    if kind == "screening":
        from xdoe.analysis._screening import plot_half_normal

        how = "Lenth's PSE" if doe["method"] == "lenth" else "pure-error t test"
        return plot_half_normal(doe, path, title=f"{experiment}: half-normal plot of effects ({how})\n"
                                                 f"response {analysis.response}, n = {analysis.runs} runs")
    if kind == "surface" and doe.get("stationary_point") is not None:
        from xdoe.analysis._surface import plot_contour

        return plot_contour(doe, doe["_coded"], doe["_factors"], doe["coding"], path,
                            title=f"{experiment}: fitted second-order surface\nresponse {analysis.response}, "
                                  f"n = {analysis.runs} runs")
    if kind == "sensitivity" and doe["method"] == "morris":
        from xdoe.analysis._sensitivity import plot_morris

        return plot_morris(doe["indices"], path, title=f"{experiment}: Morris mu*-sigma\nresponse "
                                                       f"{analysis.response}, n = {analysis.runs} runs")
    return None
