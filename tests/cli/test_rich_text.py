"""Text a user wrote (levels, run uids, warnings) is printed as written:
rich's markup (``[red]``) and emoji codes (``:smile:``) are not applied to it."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np

from xdoe.analysis import Analysis, PointAggregate, render
from xdoe.cli._analysis import _rich_table
from xdoe.cli._common import console
from xdoe.cli._inspect import _print_warnings

TYPED = ":smile: [red]hot[/red] [bold]"


def _printed(*renderables: object) -> str:
    out = console(file=io.StringIO(), width=200)
    for r in renderables:
        out.print(r)
    return out.file.getvalue()


def test_status_prints_a_run_warning_as_written() -> None:
    out = console(file=io.StringIO(), width=200)
    _print_warnings(out, [SimpleNamespace(run="r1", warnings=(TYPED,))])
    assert out.file.getvalue() == f"run r1 warning: {TYPED}\n"


def test_the_results_table_shows_levels_as_written() -> None:
    text = _printed(_rich_table(["point", "levels"], [["1", TYPED]]))
    assert TYPED in text and "😄" not in text


def test_the_analysis_table_shows_levels_and_warnings_as_written() -> None:
    point = PointAggregate(index=1, levels={"mood": TYPED}, n=2, statistic="mean", estimate=1.0, ci_low=0.5,
                           ci_high=1.5, values=np.array([0.5, 1.5]))
    a = Analysis(response="r", factors=[], interactions=[], points=[point], runs=2, warnings=[TYPED],
                 statistic="mean", experiment="e", agent=None)
    text = render(a, "table", width=200)
    assert f"mood={TYPED}" in text or TYPED in text
    assert f"warning: {TYPED}" in text and "😄" not in text
