"""A factor's levels must differ: ``levels: [1, 1]`` made a "two-level"
factor that never varies (a fractional factorial wrote it, an analysis then
found nothing to rank), and ``[0.1, 0.1, 0.5]`` ran one setting twice as two
design points. Refused in the document (located) and in the Python API."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from dummy_study import dummy_study

from xdoe.cli._xgen import main as xgen
from xdoe.design import Factor
from xdoe.errors import DesignError


@pytest.mark.parametrize("levels,twice", [
    ([1, 1], "1"), ([0.1, 0.1, 0.5], "0.1"), (["a", "b", "a"], "'a'"),
    ([{"k": 1, "j": 2}, {"j": 2, "k": 1}], "{'j': 2, 'k': 1}"), ([[1, 2], [1, 2]], "[1, 2]"),
])
def test_a_repeated_level_is_refused_by_factor(levels, twice):
    with pytest.raises(DesignError, match=f"level {__import__('re').escape(twice)} is listed twice"):
        Factor("x", levels=levels)


def test_levels_of_different_types_are_different_levels():
    assert Factor("x", levels=[True, 1, 1.0, "1"]).levels == (True, 1, 1.0, "1")


@pytest.mark.parametrize("design", ["full_factorial", {"method": "fractional_factorial", "resolution": 4}])
def test_a_repeated_level_in_the_document_is_a_located_error(tmp_path, design):
    doc = dummy_study("twice", 1, design, {"x": {"levels": [1, 1]}, "y": {"levels": [0, 1]},
                                           "z": {"levels": [0, 1]}})
    path = tmp_path / "twice.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = CliRunner().invoke(xgen, ["generate", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "factors.x.levels[1]: factor 'x' lists level 1 twice" in result.output
    assert "twice.yaml:" in result.output
    assert not (tmp_path / "out").exists()
