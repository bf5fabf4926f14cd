"""Rich tables drawn whole: a table that needs more than the console's
width is drawn as wide as its cells need (the terminal folds the lines),
never with a column dropped or a cell cut, as rich does to fit a width."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["table_width", "print_whole"]

#: the width tables are measured at (wider than any table)
_WIDE = 100_000


def table_width(out: Any, table: Any) -> int:
    """The fewest characters a rich ``table`` takes with no cell cut: each
    ``no_wrap`` column as wide as its widest line (header included, at least
    its ``min_width``), every other column as its longest word (rich's
    measure), plus the rules and padding. A ``no_wrap`` column's
    ``min_width`` is raised to that width, so that rich keeps it whole (one
    with a ``max_width``, such as ``xrun status``'s reason, is cut there by
    design: in full with ``--run UID``)."""
    from rich.measure import Measurement

    wide = out.options.update_width(_WIDE)
    cut = []  # columns cut by design: they count with their header's width
    for column in table.columns:
        if column.width is not None:
            continue
        if column.max_width is not None:
            cut.append(column)
            column.width = Measurement.get(out, wide, column.header).maximum
        elif column.no_wrap:
            cells = [column.header, *column.cells]
            full = max((Measurement.get(out, wide, cell).maximum for cell in cells), default=0)
            column.min_width = max(column.min_width or 0, full)
    try:
        return Measurement.get(out, wide, table).minimum
    finally:
        for column in cut:
            column.width = None


def print_whole(draw: Callable[..., None], out: Any, *objects: Any, **options: Any) -> None:
    """``draw(*objects, **options)`` (``out.print``, or a ``Console.print`` of
    a subclass) with ``out``'s width raised, for the call, to what the widest
    rich table among ``objects`` needs (:func:`table_width`)."""
    from rich.table import Table

    need = max((table_width(out, o) for o in objects if isinstance(o, Table)), default=0)
    if need <= out.width:
        draw(*objects, **options)
        return
    width = out.width
    out.width = need
    try:
        draw(*objects, **options)
    finally:
        out.width = width
