"""The results table in a notebook (issue 36): ``xdoe.analysis.results_table``
answers what ``xrun results`` prints, and its HTML shows the same rows."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from html_tables import parse_html

from xdoe.analysis import ResultsTable, analyze, results_table
from xdoe.cli._xrun import main as xrun
from xdoe.results import load


@pytest.fixture(scope="module")
def frame(campaign):
    return load(campaign["store"], "synthetic")


@pytest.fixture(scope="module")
def table(frame) -> ResultsTable:
    return results_table(frame)


def _cells(line: str, bar: str) -> list[str]:
    return [c.strip() for c in line.strip().strip(bar).split(bar)]


def test_the_html_shows_every_row_the_cli_prints(campaign, table) -> None:
    out = CliRunner().invoke(xrun, ["results", str(campaign["dir"])], terminal_width=200)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    header = next(line for line in lines if line.startswith("┃"))
    printed = [_cells(line, "│") for line in lines if line.startswith("│")]
    page = parse_html(table._repr_html_())
    # the terminal's header and cells, row by row, are the HTML's
    assert page.headers == _cells(header, "┃") == ["point", "levels", "runs", "IQM", "95 % CI", "P(best > point)"]
    assert page.rows == printed and len(printed) == 8
    assert printed[0][0] == f"{table.best.index} *" and printed[0][5] == "best"
    # the title and the table's caption the command prints, in the HTML's caption; the best point below it
    assert page.caption == f"{lines[0]}: {lines[1]}"
    best = next(line for line in lines if line.startswith("best: "))
    assert best in page.paragraphs


def test_the_caption_names_the_experiment_response_runs_and_method(table) -> None:
    caption = parse_html(table._repr_html_()).caption
    assert caption.startswith("synthetic · response ") and ":objective:mean" in caption
    assert "24 runs" in caption and "IQM" in caption and "95 % stratified-bootstrap CI" in caption


def test_the_numbers_are_the_analysis_s(frame, table) -> None:
    full = analyze(frame)
    assert [(p.index, p.estimate, p.ci_low, p.ci_high) for p in table.points] == \
        [(p.index, p.estimate, p.ci_low, p.ci_high) for p in full.points]
    df = table.to_frame()
    assert list(df["design_point"]) == [p.index for p in table.points]
    assert list(df["estimate"]) == [p.estimate for p in table.points]
    assert {"strong", "null", "inter", "runs", "ci_low", "ci_high", "p_improvement"} <= set(df.columns)
    assert df.attrs["experiment"] == "synthetic" and df.attrs["statistic"] == "iqm"


def test_a_level_is_escaped(frame) -> None:
    evil = frame.copy()
    evil["null"] = evil["null"].map({0: "<script>alert(1)</script>", 1: "a & b"}).astype(object)
    text = results_table(evil, statistic="mean")._repr_html_()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    page = parse_html(text)
    assert any("null=<script>alert(1)</script>" in row[1] for row in page.rows)
    assert any("null=a & b" in row[1] for row in page.rows)
    assert "mean over runs" in page.caption
