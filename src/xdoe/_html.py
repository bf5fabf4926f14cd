"""HTML for notebooks (``_repr_html_``): titled tables, every text escaped
(:func:`html.escape`)."""

from __future__ import annotations

import html
from typing import Any, Sequence

__all__ = ["html_table", "html_block", "design_sections", "factor_rows", "FACTOR_HEADERS", "MAX_HTML_ROWS"]

#: rows of a design's points shown in a notebook (a line says how many more)
MAX_HTML_ROWS = 50


def html_table(title: str, headers: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """One ``<table>`` with ``title`` as its ``<caption>``; only the title
    (a paragraph) when there are no ``rows``."""
    if not rows:
        return f"<p><b>{html.escape(title)}</b></p>"
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return (f"<table><caption style=\"text-align:left\"><b>{html.escape(title)}</b></caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def html_block(heading: str | None, parts: Sequence[str], notes: Sequence[str] = ()) -> str:
    """``heading`` (escaped; ``None``: none), the (already HTML) ``parts`` and escaped ``notes``."""
    head = "" if heading is None else "<h4>" + html.escape(heading) + "</h4>"
    return ("<div>" + head + "".join(parts)
            + "".join(f"<p>{html.escape(n)}</p>" for n in notes) + "</div>")


def design_sections(design: Any) -> list[tuple[str, list[str], list[list[str]]]]:
    """``[(title, headers, rows)]`` of a design as a notebook shows it: the
    factors (:func:`factor_rows`: what ``xgen generate --dry-run`` prints)
    and the points (their levels; the first :data:`xdoe._html.MAX_HTML_ROWS`)."""
    from xdoe.documents import canonical_json

    def text(value: Any) -> str:
        return value if isinstance(value, str) else canonical_json(value)

    names = [f.name for f in design.factors]
    shown = min(len(design), MAX_HTML_ROWS)
    points = []
    for i in range(shown):
        values = design.values(i)
        points.append([str(i), *(text(values[n]) if n in values else "" for n in names)])
    title = "points" if shown == len(design) else f"points (the first {shown} of {len(design)})"
    return [("factors", list(FACTOR_HEADERS), factor_rows(design.factors)),
            (title, ["point", *names], points)]


#: the columns of :func:`factor_rows`
FACTOR_HEADERS = ("name", "kind", "levels or range")


def factor_rows(factors: Sequence[Any]) -> list[list[str]]:
    """One row per factor (a design's ``factors``): its name, its kind
    (``categorical (2)``, ``continuous``, with its ``when`` condition) and its
    levels or range; the table ``xgen generate --dry-run`` prints and a
    design shows in a notebook."""
    from xdoe.documents import canonical_json

    rows = []
    for f in factors:
        when = "; ".join(f"{k} in {canonical_json(list(v))}" for k, v in getattr(f, "when", ()) or ())
        condition = f", when {when}" if when else ""
        if f.levels is not None:
            levels = ", ".join(v if isinstance(v, str) else canonical_json(v) for v in f.levels)
            rows.append([f.name, f"categorical ({len(f.levels)})" + condition, levels])
        else:
            extra = f", {f.scale}" + (", integer" if getattr(f, "integer", False) else "")
            rows.append([f.name, "continuous" + condition, f"[{f.low:g}, {f.high:g}]{extra}"])
    return rows
