"""The README's quoted Taxi-study outputs are what the code prints today:
``scripts/readme_figures.py`` reruns the committed study; this test fails
when a quoted block differs (rerun the script to refresh the README)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "scripts" / "readme_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_replace_blocks_only_touches_marked_blocks() -> None:
    script = _script()
    text = "a\n<!-- readme-figures:x -->\n```text\nold\n```\n<!-- /readme-figures:x -->\nb\n"
    assert script.replace_blocks(text, {"x": "new\n"}) == text.replace("old", "new")
    with pytest.raises(KeyError):
        script.replace_blocks(text, {"y": "new\n"})


@pytest.mark.slow
def test_readme_quotes_what_the_code_prints(tmp_path) -> None:
    script = _script()
    quoted = script.readme_blocks((ROOT / "README.md").read_text("utf-8"))
    assert set(quoted) == set(script.BLOCKS) | set(script.DOE_BLOCKS)
    printed = script.blocks(script.run_study(tmp_path))
    for name in script.BLOCKS:
        assert quoted[name] == printed[name], (
            f"README block {name} is out of date: run `python scripts/readme_figures.py`\n{printed[name]}")
    for name in script.PICTURES:
        assert (ROOT / "docs" / "images" / name).stat().st_size > 10_000


@pytest.mark.slow
def test_readme_walk_through_quotes_what_the_code_prints(tmp_path) -> None:
    """The screen, its fold-over, the centre points and the central composite
    design (issue 32): the README's tables are what ``xrun analyze`` prints."""
    script = _script()
    quoted = script.readme_blocks((ROOT / "README.md").read_text("utf-8"))
    printed = script.doe_blocks(script.run_walkthrough(tmp_path))
    for name in script.DOE_BLOCKS:
        assert quoted[name] == printed[name], (
            f"README block {name} is out of date: run `python scripts/readme_figures.py`\n{printed[name]}")
    for name in script.DOE_PICTURES:
        assert (ROOT / "docs" / "images" / name).stat().st_size > 10_000

