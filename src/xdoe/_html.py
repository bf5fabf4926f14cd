"""HTML for notebooks (``_repr_html_``): titled tables, every text escaped
(:func:`html.escape`)."""

from __future__ import annotations

import html
from typing import Any, Sequence

__all__ = ["html_table", "html_block", "MAX_HTML_ROWS"]

#: rows of a design's points shown in a notebook (a line says how many more)
MAX_HTML_ROWS = 50


def html_table(title: str, headers: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """One ``<table>`` with ``title`` as its ``<caption>``."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return (f"<table><caption style=\"text-align:left\"><b>{html.escape(title)}</b></caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def html_block(heading: str, parts: Sequence[str], notes: Sequence[str] = ()) -> str:
    """``heading`` (escaped), the (already HTML) ``parts`` and escaped ``notes``."""
    return ("<div><h4>" + html.escape(heading) + "</h4>" + "".join(parts)
            + "".join(f"<p>{html.escape(n)}</p>" for n in notes) + "</div>")
