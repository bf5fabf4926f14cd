"""A rich table of thousands of rows, printed in milliseconds: rich renders
every cell through its layout engine (about 1 ms a row; 5 s for the 5,000
design points of a 10,000-run campaign), although a table whose columns fit
the console is only its borders and padded cells.

:func:`print_table` lets rich draw the table once with a single placeholder
row per section (so the title, header, borders and styles are rich's own),
then repeats rich's placeholder line for every row with the row's cells
padded as rich pads them. Whenever that could differ from rich's own output
(a cell that is markup or an emoji code, a line break, a column too wide for
the console, a table option it does not know), rich prints the table itself.
``tests/analysis/test_text_table.py`` compares both renderings, plain and on
a colour terminal.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["print_table", "table_text"]

_MARK = "\u00a4"  # ¤: a placeholder cell character, one column wide
_RISKY = re.compile(r"[\[\]:\\\x00-\x1f\x7f" + _MARK + "]")


def _fits(console: Any, table: Any) -> list[int] | None:
    """Each column's width if every cell fits on one line as plain text
    (what rich would print without wrapping), else ``None``."""
    from rich import box
    from rich.cells import cell_len

    if (table.box is not box.HEAVY_HEAD or table.expand or table.show_lines or table.show_footer
            or not table.show_header or not table.show_edge or table.padding != (0, 1, 0, 1)
            or not table.pad_edge or table.collapse_padding or table.highlight or table.row_styles
            or table.width is not None or table.caption is not None or any(row.style for row in table.rows)):
        return None
    widths = []
    for column in table.columns:
        if (column.justify not in ("left", "right") or column.width is not None or column.min_width is not None
                or column.max_width is not None or column.ratio is not None or column.style or column.highlight
                or not isinstance(column.header, str)
                or console.render_str(column.header, highlight=False).plain != column.header):
            return None
        width = cell_len(column.header)
        for cell in column._cells:
            if not isinstance(cell, str):
                return None
            if _RISKY.search(cell) and console.render_str(cell, highlight=False).plain != cell:
                return None  # markup, an emoji code or a control character: rich's business
            if "\n" in cell or "\r" in cell or "\t" in cell:
                return None
            width = max(width, cell_len(cell))
        widths.append(width)
    if sum(widths) + 3 * len(widths) + 1 > console.width:
        return None
    return widths


def table_text(console: Any, table: Any) -> str | None:
    """What ``console.print(table)`` writes (a :class:`rich.table.Table` of
    text cells), or ``None`` when only rich can say (see the module docstring)."""
    from rich.cells import cell_len
    from rich.table import Table

    widths = _fits(console, table)
    if widths is None or not table.rows:
        return None
    template = Table(title=table.title, title_justify=table.title_justify, title_style=table.title_style,
                     header_style=table.header_style, border_style=table.border_style)
    for column, width in zip(table.columns, widths):
        template.add_column(column.header, justify=column.justify, overflow=column.overflow,
                            header_style=column.header_style)
    placeholder = [_MARK * w for w in widths]
    template.add_row(*placeholder, end_section=True)
    template.add_row(*placeholder)
    with console.capture() as capture:
        console.print(template)
    lines = capture.get().split("\n")
    rows_at = [i for i, line in enumerate(lines) if _MARK in line]
    if len(rows_at) != 2 or rows_at[1] != rows_at[0] + 2:
        return None
    line = lines[rows_at[0]]
    parts = re.split(_MARK + "+", line)
    if len(parts) != len(widths) + 1 or "\x1b" in line:
        return None
    out = lines[:rows_at[0]]
    cells = [column._cells for column in table.columns]
    last = len(table.rows) - 1
    for r, row in enumerate(table.rows):
        text = parts[0]
        for c, width in enumerate(widths):
            cell = cells[c][r]
            pad = " " * (width - cell_len(cell))
            text += (cell + pad if table.columns[c].justify == "left" else pad + cell) + parts[c + 1]
        out.append(text)
        if row.end_section and r != last:
            out.append(lines[rows_at[0] + 1])
    out += lines[rows_at[1] + 1:]
    return "\n".join(out)


def print_table(console: Any, table: Any) -> None:
    """``console.print(table)``, fast for a large table of plain text cells
    (same characters; see the module docstring)."""
    text = table_text(console, table)
    if text is None:
        console.print(table)
    else:
        console.file.write(text)
