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

#: the design points filled in (two runs each)
FILLED = TABLE_ROWS + 21


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    url = f"sqlite:///{tmp_path_factory.mktemp('large') / 'xrun.sqlite'}"
    with Store(url) as store:
        fill_synthetic_campaign(store, runs=2 * FILLED, episodes=4, seed=7)  # two runs per design point
    return url


@pytest.fixture(scope="module")
def points(url: str) -> int:
    """The design points with a finished run (runs that did not finish are left out: one point of the
    filled campaign has only such runs), read from the store's tables directly."""
    import sqlite3

    with sqlite3.connect(url.removeprefix("sqlite:///")) as con:
        (n,) = con.execute("SELECT count(DISTINCT r.design_point) FROM run r JOIN run_instance i "
                           "ON i.run_id = r.id WHERE i.status = 'finished'").fetchone()
    assert TABLE_ROWS < n < FILLED
    return int(n)


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


def test_every_format_but_the_table_holds_every_design_point(url, points) -> None:
    shown = _markdown_points(url)
    assert len(shown) == points and shown[0].endswith("*")  # the best first
    csv = _xrun("analyze", "--store", url, "-e", "bench", "--format", "csv")
    assert sum(1 for line in csv.splitlines() if ",point," in line) == points
    data = json.loads(_xrun("analyze", "--store", url, "-e", "bench", "--format", "json"))
    assert len(data["points"]) == points


def test_the_terminal_tables_draw_the_best_rows_and_say_where_the_rest_are(url, points) -> None:
    best = _markdown_points(url)[:TABLE_ROWS]
    more = f"... {points - TABLE_ROWS:,} more rows not drawn (the first {TABLE_ROWS:,} of {points:,} above)"
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
