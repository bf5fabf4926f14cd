"""A design's notebook display (issue 36): the factors and points the dry run shows, escaped."""

from pathlib import Path

from xdoe.design.runfiles import prepare
from xdoe._html import design_sections as html_sections

ROOT = Path(__file__).resolve().parents[2]


def test_a_design_displays_its_factors_and_points_as_html_tables() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "analysis"))
    from test_effects import _html_tables

    _exp, design, _runs = prepare(ROOT / "experiments" / "dummy.yaml")
    headings, tables = _html_tables(design._repr_html_())
    assert headings == [f"design: {design.method}, {len(design)} points"]
    assert tables == [(t, h, r) for t, h, r in html_sections(design)]
    factors = tables[0]
    assert [row[0] for row in factors[2]] == [f.name for f in design.factors]
    assert len(tables[1][2]) == len(design) == 8
    assert "<script>" not in design._repr_html_().replace("&lt;script&gt;", "")


def test_a_design_in_a_notebook_names_its_factors_as_the_dry_run_does(tmp_path: Path, monkeypatch) -> None:
    """The notebook's factor table is the dry run's, row for row: a
    conditional factor's ``when agent in [["learner"]]`` was left out of the
    notebook (two implementations of the one table)."""
    from click.testing import CliRunner

    from xdoe.cli._xgen import main

    monkeypatch.delenv("COLUMNS", raising=False)
    for name in ("taxi.yaml", "dummy.yaml", "peak-ccd.yaml", "taxi-screen.yaml"):
        _exp, design, _runs = prepare(ROOT / "experiments" / name)
        factors = html_sections(design)[0][2]
        dry = CliRunner().invoke(main, ["generate", str(ROOT / "experiments" / name), "--dry-run",
                                        "-o", str(tmp_path / "o")])
        assert dry.exit_code == 0, dry.output
        lines = dry.output.splitlines()
        first = lines[:next(k for k, line in enumerate(lines) if line.startswith("└"))]  # the factor table
        shown = [line for line in first if line.startswith("│")]
        assert [[cell.strip() for cell in line.strip("│").split("│")] for line in shown] == factors
