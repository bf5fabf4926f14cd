"""print_table writes exactly what rich writes for the same table (issue 26:
rich took 5 s for the 5,000 rows of a 10,000-run campaign's results)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table

from xdoe.analysis._text_table import print_table, table_text


def _results_like(rows: int, section: bool = True) -> Table:
    table = Table()
    for h in ("point", "levels", "runs", "IQM", "95 % CI", "P(best > point)"):
        table.add_column(h, justify="right" if h in ("runs", "point") else "left", overflow="fold")
    for i in range(rows):
        table.add_row(f"{i}{' *' if i == 0 else ''}", f"alpha={0.5 / (i + 1):.4g}, gamma=0.9, agent=q-learning",
                      "2", f"{10 - i / 7:.4g}", f"[{-i / 3:.4g}, {i * 1.5:.4g}]", "best" if i == 0 else "0.5 [0, 1]")
    if section:
        table.add_section()
        table.add_row("branch", "taxi-0000_b01 (taxi-0000 + brain.params.alpha=0.25)", "1", "3.2", "-", "0.9 [0.5, 1]")
    return table


def _analyze_like() -> Table:
    table = Table(title="Factors ranked by partial η² (bootstrap over runs, a title long enough to wrap)",
                  title_justify="left")
    for h in ("factor", "kind", "effect", "F", "p", "partial η²", "levels (mean [95 % CI], n)"):
        table.add_column(h, overflow="fold")
    table.add_row("alpha", "categorical", "3.1", "12.5", "p<0.0001", "0.91", "0.1: 3 [2, 4] (n=5); 0.5: 6 [5, 7] (n=5)")
    table.add_row("épsilon", "continuous", "-0.2", "-", "-", "-", "")
    return table


def _both(make, *, width: int, terminal: bool) -> tuple[str, str | None]:
    def console() -> Console:
        return Console(file=io.StringIO(), width=width, force_terminal=terminal,
                       color_system="truecolor" if terminal else None)

    theirs, ours = console(), console()
    theirs.print(make())
    print_table(ours, make())
    return theirs.file.getvalue(), ours.file.getvalue()


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("make", [lambda: _results_like(40), lambda: _results_like(3, section=False), _analyze_like])
def test_print_table_writes_what_rich_writes(make, terminal: bool) -> None:
    theirs, ours = _both(make, width=200, terminal=terminal)
    assert ours == theirs
    assert table_text(Console(file=io.StringIO(), width=200), make()) is not None  # the fast way was taken


@pytest.mark.parametrize("cell", ["[bold]x[/bold]", "a :smile: b", "two\nlines", "tab\there"])
def test_cells_rich_would_change_are_left_to_rich(cell: str) -> None:
    def make() -> Table:
        table = _results_like(3)
        table.add_row("9", cell, "2", "1", "[0, 1]", "1 [1, 1]")
        return table

    assert table_text(Console(file=io.StringIO(), width=200), make()) is None
    theirs, ours = _both(make, width=200, terminal=False)
    assert ours == theirs


def test_a_table_wider_than_the_console_is_left_to_rich() -> None:
    assert table_text(Console(file=io.StringIO(), width=60), _results_like(5)) is None
    theirs, ours = _both(lambda: _results_like(5), width=60, terminal=False)
    assert ours == theirs
