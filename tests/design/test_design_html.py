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
