"""The analysis matched to the design (issue 24): screening for two-level
designs (:mod:`xdoe.analysis._screening`), the second-order model and its
canonical analysis for response-surface designs (:mod:`xdoe.analysis._surface`),
Morris and Sobol' indices for sensitivity designs
(:mod:`xdoe.analysis._sensitivity`). :func:`doe_analysis` picks one from the
manifest's method (``design``) or, without a manifest, from the runs
(:func:`~xdoe.analysis._design_info.infer_design`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xdoe.analysis._design_info import SENSITIVITY, SURFACE, TWO_LEVEL, coded_frame, infer_design

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["doe_analysis", "block_column"]


def block_column(table: "pd.DataFrame", design: dict[str, Any] | None) -> "pd.Series | None":
    """The block of every run: ``design["blocks"]`` maps design points to
    blocks (an augmented design, :mod:`xdoe.design._augment`); ``None`` for one block."""
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


def doe_analysis(table: "pd.DataFrame", factors: list[str], design: dict[str, Any] | None,
                 seed: int = 0) -> dict[str, Any] | None:
    """``{"analysis": "screening" | "surface" | "sensitivity", ...}`` or ``None``
    when the design is none of those (or inferred as none of those).

    ``screening``: :func:`~xdoe.analysis._screening.screening`; ``surface``:
    :func:`~xdoe.analysis._surface.surface`; ``sensitivity``: ``{"method",
    "indices"}`` (:func:`~xdoe.analysis._sensitivity.sensitivity`). Each also
    carries ``coding`` and ``source`` (``manifest`` or ``inferred``).
    """
    if not factors or table[factors].isna().any().any():
        return None
    if design is None:
        design = infer_design(table, factors)
        if design is None:
            return None
        if design["method"] == "two_level" and table["design_point"].duplicated().any():
            return None  # a replicated two-level design of today's names: today's ANOVA answers it
    method = design.get("method")
    coding = design.get("coding") or {}
    if any(f not in coding for f in factors):
        return None
    source = "inferred" if design.get("inferred") else "manifest"
    coded = coded_frame(table, factors, design)
    blocks = block_column(table, design)
    if method in TWO_LEVEL or method == "two_level" or (method == "augmented" and design.get("family") == "two_level"):
        from xdoe.analysis._screening import screening

        aliases = ((design.get("diagnostics") or {}).get("aliases")) or None
        two = [f for f in factors if "scale" not in coding[f] or set(np.unique(coded[f])) <= {-1.0, 0.0, 1.0}]
        if two != factors:
            return None
        if blocks is not None and blocks.nunique() > 1:
            aliases = None  # the fold-over changed them: computed from the combined design
        return {"analysis": "screening", "source": source, "coding": coding,
                **screening(table, coded, factors, aliases, blocks=blocks)}
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


def merge_effects(doe: dict[str, Any] | None, effects: list[Any]) -> list[Any]:
    """The factor effects with a screening's signed effect (high - low),
    aliases, p and ``active`` flag in place of the range of level means and
    the type II ANOVA's p: without replication Lenth's; with replication the
    t test of the saturated contrast model on the pure error (the type II
    ANOVA of main effects and two-factor interactions is rank-deficient in a
    fraction, whose interactions are aliased); ranked by ``|effect|``.
    Unchanged for any other analysis."""
    if doe is None or doe.get("analysis") != "screening":
        return effects
    rows = {r["name"]: r for r in doe["effects"]}
    for e in effects:
        row = rows.get(e.name)
        if row is not None:
            e.effect, e.p, e.active, e.aliases = row["effect"], row["p"], row["active"], list(row["aliases"])
    return sorted(effects, key=lambda e: (-(abs(e.effect) if e.effect == e.effect else -1), e.name))


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if not str(k).startswith("_")}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.generic,)):
        x = x.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


def doe_json(doe: dict[str, Any]) -> dict[str, Any]:
    """The JSON keys of the analysis matched to the design: ``screening``
    (method, PSE, ME, SME, every contrast), ``surface`` (coefficients, lack of
    fit, ``stationary_point``, ``kind``, ``inside``, ``predicted``...) or
    ``sensitivity`` (a list, one entry per factor)."""
    kind = doe["analysis"]
    body = {k: v for k, v in doe.items() if k not in ("analysis", "coding")}
    if kind == "sensitivity":
        return {"sensitivity": _plain(body["indices"]), "sensitivity_method": body["method"]}
    return {kind: _plain(body)}


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
        rows = [[r["name"], _f(r["effect"]), _f(r["t"], 3), _pv(r["p"]), "yes" if r["active"] else "",
                 " = ".join(r["aliases"])] for r in sorted(doe["effects"], key=lambda r: -abs(r["effect"]))]
        out = [(f"Two-level screening (response {response}, {doe['runs']} runs at {doe['points']} points, "
                f"{doe['centre_points']} centre runs; {how})",
                ["contrast", "effect (high - low)", "t", "p", "active", "aliases"], rows)]
        curv = doe.get("curvature")
        if curv is not None:
            out.append((f"Curvature: cube mean - centre mean (response {response}, {curv['centre_runs']} centre runs)",
                        ["effect", "t", "df", "p"],
                        [[_f(curv["effect"]), _f(curv["t"], 3), str(curv["df"]), _pv(curv["p"])]]))
        return out
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
        return out
    rows = doe["indices"]
    if doe["method"] == "morris":
        return [(f"Morris elementary effects (response {response}, {runs} runs; SALib)",
                 ["factor", "mu*", "mu* 95 % conf", "sigma", "mu"],
                 [[r["name"], _f(r["mu_star"]), _f(r["mu_star_conf"]), _f(r["sigma"]), _f(r["mu"])] for r in rows])]
    return [(f"Sobol' indices (response {response}, {runs} runs; SALib, 95 % bootstrap half-widths)",
             ["factor", "S1", "S1 conf", "ST", "ST conf"],
             [[r["name"], _f(r["S1"]), _f(r["S1_conf"]), _f(r["ST"]), _f(r["ST_conf"])] for r in rows])]


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
