"""Tables of thousands of design points (issue 26.1): the terminal table of
``xrun results`` and ``xrun analyze`` draws the best :data:`TABLE_ROWS`
rows with rich and one line saying how many more there are and where every
row is; ``--format csv``, ``markdown`` and ``json`` hold every row."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from xdoe.analysis import TABLE_ROWS
from xdoe.cli._xrun import main

POINTS = TABLE_ROWS + 20


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    url = f"sqlite:///{tmp_path_factory.mktemp('large') / 'xrun.sqlite'}"
    with Store(url) as store:
        fill_synthetic_campaign(store, runs=2 * POINTS, episodes=4, seed=7)  # two runs per design point
    return url


def _xrun(*args: str) -> str:
    result = CliRunner().invoke(main, [*args], catch_exceptions=False, terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.stdout


def _markdown_points(url: str) -> list[str]:
    """The point column of analyze's markdown design-points table: every point, best first."""
    text = _xrun("analyze", "--store", url, "-e", "bench", "--format", "markdown")
    table = text[text.index("### Design points ranked"):]
    return [line.split("|")[1].strip() for line in table.splitlines()[4:] if line.startswith("| ")]


def _drawn_points(text: str) -> list[str]:
    """The point column of a rich table's design-point rows (rows wrapped by fold have an empty first cell)."""
    return [m[1] for m in re.finditer(r"^│\s*(\d+(?: \*)?)\s*│", text, flags=re.M)]


def test_every_format_but_the_table_holds_every_design_point(url) -> None:
    points = _markdown_points(url)
    assert len(points) == POINTS and points[0].endswith("*")  # the best first
    csv = _xrun("analyze", "--store", url, "-e", "bench", "--format", "csv")
    assert sum(1 for line in csv.splitlines() if ",point," in line) == POINTS
    data = json.loads(_xrun("analyze", "--store", url, "-e", "bench", "--format", "json"))
    assert len(data["points"]) == POINTS


def test_the_terminal_tables_draw_the_best_rows_and_say_where_the_rest_are(url) -> None:
    best = _markdown_points(url)[:TABLE_ROWS]
    more = f"... {POINTS - TABLE_ROWS:,} more rows not drawn (the first {TABLE_ROWS:,} of {POINTS:,} above)"
    results = _xrun("results", "--store", url, "-e", "bench")
    assert _drawn_points(results) == best
    assert f"{more}; every row: xrun analyze --format csv" in results
    assert results.index(more) < results.index("best: design point")
    analyzed = _xrun("analyze", "--store", url, "-e", "bench")
    points_table = analyzed[analyzed.index("Design points ranked"):]
    assert _drawn_points(points_table) == best
    assert f"{more}; every row: --format csv, markdown or json" in points_table
    # a table of at most TABLE_ROWS rows is drawn whole, without the line
    assert "more rows not drawn" not in analyzed[:analyzed.index("Design points ranked")]
