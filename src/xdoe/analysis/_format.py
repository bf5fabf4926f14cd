"""Render an :class:`~xdoe.analysis.Analysis` as a text table, CSV, Markdown or JSON.

All formats but JSON come from one list of sections (title, headers, rows),
so they always say the same thing.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from xdoe.analysis._result import Analysis

__all__ = ["render", "sections", "FORMATS", "fmt_num", "fmt_levels"]

FORMATS = ("table", "csv", "markdown", "json")


def fmt_num(x: Any, digits: int = 4) -> str:
    """A number with ``digits`` significant digits; ``-`` for NaN/None."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _p(p: float) -> str:
    if p is None or not math.isfinite(p):
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _ci(low: float, high: float) -> str:
    return "-" if not (math.isfinite(low) and math.isfinite(high)) else f"[{fmt_num(low)}, {fmt_num(high)}]"


def fmt_levels(levels: dict[str, Any]) -> str:
    """``agent=learner, alpha=0.5``."""
    return ", ".join(f"{k}={fmt_num(v)}" for k, v in levels.items()) or "(no factors)"


def sections(a: Analysis) -> list[tuple[str, list[str], list[list[str]]]]:
    """``[(title, headers, rows)]``: factor ranking, level means, interactions,
    the analysis matched to the design (:func:`xdoe.analysis._doe.doe_sections`),
    design points (mean, IQM, probability of improvement), best; the design
    points are always the last section."""
    out = []
    out.append((f"Factors ranked by effect size (response {a.response}, {a.runs} runs)",
                ["rank", "factor", "kind", "effect", "F", "p", "partial eta²"],
                [[str(i + 1), f.name + (f" (within {f.within})" if f.within else ""), f.kind, fmt_num(f.effect),
                  fmt_num(f.F), _p(f.p), fmt_num(f.eta_sq, 3)] for i, f in enumerate(a.factors)]))
    rows = []
    for f in a.factors:
        for lv in f.levels:
            rows.append([f.name, fmt_num(lv.level), fmt_num(lv.mean), _ci(lv.ci_low, lv.ci_high), str(lv.n)])
        if f.kind == "continuous":
            rows.append([f.name, "(continuous)", f"standardised coefficient {fmt_num(f.effect)}", "-", "-"])
    out.append(("Level means (95 % t interval over runs)", ["factor", "level", "mean", "95 % CI", "runs"], rows))
    if a.interactions:
        out.append(("Two-way interactions", ["factors", "F", "p", "partial eta²"],
                    [[" x ".join(i.factors), fmt_num(i.F), _p(i.p), fmt_num(i.eta_sq, 3)] for i in a.interactions]))
    best = a.points[0] if a.points else None
    out.append(("Design points: mean, interquartile mean (stratified bootstrap 95 % CI), P(best > point)",
                ["point", "levels", "reps", "mean", "95 % CI", "IQM", "IQM 95 % CI", "P(best > point)"],
                [[str(p.index) + (" *" if p is best else ""), fmt_levels(p.levels), str(p.n), fmt_num(p.mean),
                  _ci(p.ci_low, p.ci_high), fmt_num(p.iqm), _ci(p.iqm_low, p.iqm_high),
                  "best" if p.improvement is None else
                  f"{fmt_num(p.improvement[0], 3)} {_ci(p.improvement[1], p.improvement[2])}"]
                 for p in a.points]))
    from xdoe.analysis._doe import doe_sections

    return out[:-1] + doe_sections(a.doe, a.response, a.runs) + out[-1:]  # the design points stay last


def _csv(a: Analysis) -> str:
    """One tidy row per factor level (a continuous factor: one row, level
    empty), raw numbers, the factor's statistics repeated on each row."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "factor", "kind", "within", "effect", "F", "p", "eta_sq",
                "level", "mean", "ci_low", "ci_high", "n"])
    for rank, f in enumerate(a.factors, 1):
        head = [rank, f.name, f.kind, f.within, *(d.get(k) for d in [f.to_dict()] for k in ("effect", "F", "p", "eta_sq"))]
        for lv in f.levels or [None]:
            tail = ["", "", "", "", ""] if lv is None else list(lv.to_dict().values())
            w.writerow(["" if v is None else v for v in head + tail])
    return buf.getvalue()


def render(a: Analysis, fmt: str = "table") -> str:
    """``a`` as text: ``table`` (rich, for terminals), ``csv`` (one row per
    factor level, raw numbers), ``markdown`` or ``json``
    (:meth:`Analysis.to_dict`)."""
    if fmt == "json":
        return json.dumps(a.to_dict(), indent=2, ensure_ascii=False)
    secs = sections(a)
    if fmt == "csv":
        return _csv(a)
    if fmt == "markdown":
        parts = []
        for title, headers, rows in secs:
            esc = [[c.replace("|", "\\|") for c in r] for r in rows]
            parts.append(f"### {title}\n\n| " + " | ".join(headers) + " |\n|" + "---|" * len(headers) + "\n"
                         + "".join("| " + " | ".join(r) + " |\n" for r in esc))
        parts += [f"> warning: {w}\n" for w in a.warnings]
        return "\n".join(parts)
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    from rich.console import Console
    from rich.table import Table

    console = Console(file=io.StringIO(), width=120, force_terminal=False, color_system=None)
    for title, headers, rows in secs:
        table = Table(title=title, title_justify="left")
        for h in headers:
            table.add_column(h, overflow="fold")
        for r in rows:
            table.add_row(*r)
        console.print(table)
    for w in a.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    return console.file.getvalue()  # type: ignore[attr-defined]
