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

from xdoe.analysis._optuna import optuna_text
from xdoe.analysis._result import Analysis

__all__ = ["render", "sections", "points_section", "factor_section", "interaction_section", "csv_rows", "FORMATS", "fmt_num", "fmt_levels", "TABLE_ROWS",
           "shown_rows"]

FORMATS = ("table", "csv", "markdown", "json")
#: rows of one table drawn in the terminal (``table`` format): rich lays out about 1 ms a row
#: (5 s for 5,000 design points); the rest is one line saying how many and how to get them
TABLE_ROWS = 500


def shown_rows(rows: list[list[str]], every: str, limit: int = TABLE_ROWS) -> tuple[list[list[str]], str | None]:
    """The first ``limit`` of ``rows`` (the ranked tables list the best first)
    and, when some are left out, the line that says so and names ``every``,
    the command or option that gives every row (``None`` when all are shown)."""
    if len(rows) <= limit:
        return rows, None
    return rows[:limit], (f"... {len(rows) - limit:,} more rows not drawn (the first {limit:,} of {len(rows):,} "
                          f"above); every row: {every}")


def fmt_num(x: Any, digits: int = 4) -> str:
    """A number with ``digits`` significant digits; ``inf``/``-inf`` for an
    infinite one (a t or F over a zero error: a noise-free response); ``-``
    for NaN/None."""
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
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


STAT_NAMES = {"iqm": "IQM", "mean": "mean", "median": "median"}


def _point_label(p: Any) -> str:
    """``3``, or ``8, 9, 10`` for one setting run at several design points (centre points)."""
    shown = p.design_points or [p.index]
    return ", ".join(map(str, shown[:4])) + (f" (+{len(shown) - 4})" if len(shown) > 4 else "")


def points_section(a: Analysis) -> tuple[str, list[str], list[list[str]]]:
    """The design points table (best first by ``a.goal``): levels, runs, the
    estimate by ``a.statistic`` with its bootstrap interval, P(best > point)
    (minimize: P(best < point), and the caption says lower is better and why)."""
    stat = STAT_NAMES.get(a.statistic, a.statistic)
    best = a.best
    note = a.goal.note()
    return (f"Design points ranked by {stat} over runs (one row per setting; 95 % stratified-bootstrap CI over "
            f"runs), {a.goal.improvement}" + (f"; {note}" if note else ""),
            ["point", "levels", "runs", stat, "95 % CI", a.goal.improvement],
            [[_point_label(p) + (" *" if p is best else ""), fmt_levels(p.levels), str(p.n), fmt_num(p.estimate),
              _ci(p.ci_low, p.ci_high),
              "best" if p.improvement is None else
              f"{fmt_num(p.improvement[0], 3)} {_ci(p.improvement[1], p.improvement[2])}"]
             for p in a.points])


def _aliases(names: list[str] | None, shown: int = 6) -> str:
    names = list(names or [])
    text = " = ".join(names[:shown])
    return text + (f" = ... (+{len(names) - shown}, every one in --format json)" if len(names) > shown else "")


def _df_text(df: Any) -> str:
    if not df:
        return "-"
    if df[0] is None:  # Lenth's t: one number of degrees of freedom, m / 3
        return fmt_num(df[1], 3)
    return ", ".join("-" if d is None else fmt_num(d, 3) for d in df)


def _drop_empty(headers: list[str], rows: list[list[str]], keep: int) -> tuple[list[str], list[list[str]]]:
    """The columns after the first ``keep`` in which some row has a value."""
    cols = [j for j in range(len(headers)) if j < keep or any(r[j] not in ("-", "") for r in rows)]
    return [headers[j] for j in cols], [[r[j] for j in cols] for r in rows]


def factor_section(a: Analysis) -> tuple[str, list[str], list[list[str]]]:
    """The factor table: one row per factor, every column from the model
    ``a.methods["factors"]`` names (columns that model does not give left out)."""
    two = any(f.kind == "two-level" for f in a.factors)
    headers = ["rank", "factor", "kind", "effect (high - low)" if two else "effect", "t", "F", "df", "p",
               "partial eta²", "active", "aliases"]
    rows = [[str(i + 1), f.name + (f" (within {f.within})" if f.within else ""), f.kind, fmt_num(f.effect),
             fmt_num(f.t, 3), fmt_num(f.F), _df_text(f.df), _p(f.p), fmt_num(f.eta_sq, 3),
             "" if f.active is None else ("yes" if f.active else "no"), _aliases(f.aliases)]
            for i, f in enumerate(a.factors)]
    headers, rows = _drop_empty(headers, rows, 4)
    method = a.methods.get("factors") or "none fitted: no factor varies across these runs"
    return f"Factor effects ({a.title()}; {method})", headers, rows


def interaction_section(a: Analysis) -> tuple[str, list[str], list[list[str]]] | None:
    """The interactions of the same model: a two-level design's estimable
    two-factor-interaction chains (one row per chain), the ANOVA's or the
    second-order model's interaction terms."""
    if not a.interactions:
        return None
    headers = ["interaction", "effect", "t", "F", "df", "p", "partial eta²", "active", "aliases"]
    rows = [[i.name or " x ".join(i.factors), fmt_num(i.effect), fmt_num(i.t, 3), fmt_num(i.F), _df_text(i.df),
             _p(i.p), fmt_num(i.eta_sq, 3), "" if i.active is None else ("yes" if i.active else "no"),
             _aliases(i.aliases)] for i in a.interactions]
    headers, rows = _drop_empty(headers, rows, 1)
    return f"Interactions ({a.response}; {a.methods.get('interactions', '')})", headers, rows


def sections(a: Analysis) -> list[tuple[str, list[str], list[list[str]]]]:
    """``[(title, headers, rows)]``: the factor table (only its title,
    without rows, when no factor varies: no model was fitted), level means,
    interactions, what else the design's model gives
    (:func:`xdoe.analysis._doe.doe_sections`: other contrasts and curvature,
    lack of fit and canonical analysis, sensitivity indices), design points
    (estimate by ``a.statistic``, probability of improvement); every title
    names the model its numbers come from; the design points are always the
    last section."""
    out = [factor_section(a)]
    rows = []
    for f in a.factors:
        for lv in f.levels:
            rows.append([f.name, fmt_num(lv.level), fmt_num(lv.mean), _ci(lv.ci_low, lv.ci_high), str(lv.n)])
        if f.kind == "continuous" and not f.levels and f.method == "anova":
            rows.append([f.name, "(continuous)", f"standardised coefficient {fmt_num(f.effect)}", "-", "-"])
    if rows:
        out.append(("Level means, low to high (descriptive: mean of the runs at each level, 95 % bootstrap CI "
                    "over runs)", ["factor", "level", "mean", "95 % CI", "runs"], rows))
    inter = interaction_section(a)
    if inter is not None:
        out.append(inter)
    from xdoe.analysis._doe import doe_sections

    return out + doe_sections(a.doe, a.response, a.runs) + [points_section(a)]  # the design points stay last


CSV_COLUMNS = ("experiment", "response", "agent", "table", "method", "rank", "factor", "kind", "within", "effect",
               "t", "F", "df", "p", "eta_sq", "active", "aliases", "level", "mean", "ci_low", "ci_high", "n", "design_point", "levels", "statistic",
               "estimate", "p_improvement", "p_improvement_low", "p_improvement_high", "section", "column", "value")


def csv_rows(a: Analysis) -> list[dict[str, Any]]:
    """Everything the table shows as tidy rows (raw numbers, ``None`` for
    NaN), ``table`` = ``factor`` (one row per level; a continuous factor one
    row), ``interaction``, ``point`` (best first), or ``design`` for the
    analysis matched to the design (screening, surface, sensitivity): one
    row per cell, long format, ``section`` (its title), ``factor`` (the
    row's first cell), ``column`` and ``value`` (as the table shows it)."""
    head = {"experiment": a.experiment, "response": a.response, "agent": a.agent}
    rows: list[dict[str, Any]] = []
    for rank, f in enumerate(a.factors, 1):
        d = f.to_dict()
        base = {**head, "table": "factor", "method": a.methods.get("factors"), "rank": rank, "factor": f.name,
                "kind": f.kind, "within": f.within, **{k: d[k] for k in ("effect", "t", "F", "p", "eta_sq")},
                "df": _df_text(f.df) if f.df else None, "active": d.get("active"),
                "aliases": " = ".join(f.aliases or []) or None}
        for lv in d["levels"] or [{}]:
            rows.append({**base, **lv})
    for i in a.interactions:
        d = i.to_dict()
        rows.append({**head, "table": "interaction", "method": a.methods.get("interactions"), "factor": d["name"],
                     **{k: d[k] for k in ("effect", "t", "F", "p", "eta_sq")},
                     "df": _df_text(i.df) if i.df else None, "active": d.get("active"),
                     "aliases": " = ".join(i.aliases or []) or None})
    for rank, p in enumerate(a.points, 1):
        d = p.to_dict()
        imp = d["prob_improvement_of_best"] or {}
        rows.append({**head, "table": "point", "method": a.methods.get("points"), "rank": rank, "design_point": p.index, "levels": fmt_levels(p.levels),
                     "n": p.n, "statistic": p.statistic, "estimate": d["estimate"], "ci_low": d["ci_low"],
                     "ci_high": d["ci_high"], "p_improvement": imp.get("p"),
                     "p_improvement_low": imp.get("ci_low"), "p_improvement_high": imp.get("ci_high")})
    from xdoe.analysis._doe import doe_sections

    for title, headers, cells in doe_sections(a.doe, a.response, a.runs):
        for r in cells:
            rows += [{**head, "table": "design", "section": title, "factor": r[0], "column": h, "value": v}
                     for h, v in zip(headers[1:], r[1:])]
    return rows


def _csv(analyses: list[Analysis]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for a in analyses:
        for row in csv_rows(a):
            w.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def render(analysis: "Analysis | list[Analysis]", fmt: str = "table", *, width: int = 120) -> str:
    """An analysis (or one per agent) as text: ``table`` (rich, for
    terminals), ``csv`` (:func:`csv_rows`, raw numbers), ``markdown`` or
    ``json`` (:meth:`Analysis.to_dict`; a list, one analysis per agent:
    ``{"experiment", "response", "agents": {name: to_dict()}}``). An optuna
    design's answer (``Analysis.adaptive``) follows each analysis (JSON:
    its ``optuna``). Every
    format holds everything the table shows; ``table`` is at most ``width``
    columns wide and draws at most :data:`TABLE_ROWS` rows of a table (a
    line says how many more there are and names the formats that hold them)."""
    analyses = analysis if isinstance(analysis, list) else [analysis]
    if fmt == "json":
        if isinstance(analysis, list):
            first = analyses[0] if analyses else None
            data: Any = {"experiment": first and first.experiment, "response": first and first.response,
                         "agents": {a.agent: a.to_dict() for a in analyses}}
        else:
            data = analysis.to_dict()
        return json.dumps(data, indent=2, ensure_ascii=False)
    if fmt == "csv":
        return _csv(analyses)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return "".join(_render_one(a, fmt, width) for a in analyses)


def _render_one(a: Analysis, fmt: str, width: int) -> str:
    secs = sections(a)
    if fmt == "markdown":
        parts = [f"## {a.title()}\n"]
        for title, headers, rows in secs:
            esc = [[c.replace("|", "\\|") for c in r] for r in rows]
            parts.append(f"### {title}\n\n| " + " | ".join(headers) + " |\n|" + "---|" * len(headers) + "\n"
                         + "".join("| " + " | ".join(r) + " |\n" for r in esc))
        parts += [f"> warning: {w}\n" for w in a.warnings]
        if a.adaptive is not None:
            parts.append(optuna_text(a.adaptive, fmt))
        return "\n".join(parts)
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from xdoe._tables import print_whole

    # Text cells: a level such as "[red]" or ":smile:" is shown as written, not as markup or emoji
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None, emoji=False)
    for title, headers, rows in secs:
        # the title on a line of its own: the table is as wide as its cells (a title as wide as
        # the table would stretch every column to the title's length, or fold the title)
        console.print(Text(title))
        if not rows:  # nothing to show under it (no factor varies): the title says so
            continue
        table = Table()
        for h in headers:
            table.add_column(Text(h), overflow="fold")
        rows, more = shown_rows(rows, "--format csv, markdown or json")
        for r in rows:
            table.add_row(*map(Text, r))
        print_whole(console.print, console, table)  # too narrow: wider, never a column cut
        if more:
            console.print(more, markup=False, highlight=False)
    for w in a.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    return text if a.adaptive is None else text + optuna_text(a.adaptive, fmt)

