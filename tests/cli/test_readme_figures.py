"""The outputs the docs quote are what the code prints today, and the commands
around them run as written: ``scripts/readme_figures.py`` runs the README's
quick start and the tutorial (``docs/getting-started/tutorial.md``), and the
DoE walk-through (``docs/how-to/doe-sequence.md``), each in a fresh folder;
these tests fail when a command fails or a quoted block differs (rerun the
script to refresh the pages)."""

from __future__ import annotations

import importlib.util
import re
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


def test_every_block_follows_the_commands_it_quotes() -> None:
    """Each page's marked blocks are the script's, each right after a ```bash
    block whose last command prints it, and each picture is written by a
    command of its page."""
    script = _script()
    for name, (page, _) in script.PAGES.items():
        text = page.read_text("utf-8")
        blocks = {block for block, (of, _) in script.SECTIONS.items() if of == name}
        assert set(script.readme_blocks(text)) == blocks, page
        quoted = [(argvs[-1], block) for argvs, block in script.steps(text) if block is not None]
        assert {block for _, block in quoted} == blocks
        assert all(argv[:2] in (["xrun", "results"], ["xrun", "analyze"]) for argv, _ in quoted), quoted
        written = {argv[argv.index("-o") + 1] for argvs, _ in script.steps(text) for argv in argvs if "-o" in argv}
        for picture, (of, made) in script.PICTURES.items():
            if of == name:
                assert made in written, (picture, made)
                assert (ROOT / "docs" / "images" / picture).stat().st_size > 10_000
    readme = script.steps((ROOT / "README.md").read_text("utf-8"))
    assert [argv[:2] for argvs, _ in readme for argv in argvs] == [
        ["xgen", "generate"], ["xrun", "experiment-start"], ["xrun", "analyze"], ["xrun", "report"]]


def _check(script, name: str, folder: Path) -> None:
    page = script.PAGES[name][0]
    quoted = script.readme_blocks(page.read_text("utf-8"))
    printed = script.quoted(script.run_page(name, folder))
    for block in quoted:
        assert quoted[block] == printed[block], (
            f"{page.name}: block {block} is out of date: run `python scripts/readme_figures.py`\n{printed[block]}")
    for picture, (of, made) in script.PICTURES.items():
        if of == name:
            assert (folder / made).stat().st_size > 10_000


@pytest.mark.slow
def test_quick_start_and_tutorial_run_and_quote_what_the_code_prints(tmp_path, monkeypatch) -> None:
    script = _script()
    _check(script, "tutorial", tmp_path)
    assert len(list((tmp_path / "_outputs").glob("run-taxi-study-*.yaml"))) == 9  # extended to 3 repetitions
    assert (tmp_path / "report.html").stat().st_size > 10_000 and (tmp_path / "results.csv").is_file()
    # the tutorial's Python block, on the study its commands ran
    page = script.PAGES["tutorial"][0].read_text("utf-8")
    (python,) = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(python, "tutorial.md", "exec"), namespace)
    expected = re.search(r"analysis\.best\.levels +# (\{.*\})", python)[1]
    assert repr(namespace["analysis"].best.levels) == expected
    assert len(namespace["df"]) == 11_250  # 9 runs x (1,200 + 50) episodes


@pytest.mark.slow
def test_doe_walk_through_runs_and_quotes_what_the_code_prints(tmp_path) -> None:
    """The screen, its fold-over, the centre points and the central composite
    design (issue 32), each folder with a store of its own (issue 36)."""
    script = _script()
    _check(script, "doe", tmp_path)
    assert (tmp_path / "_outputs" / "screen" / "xrun.sqlite").is_file()
    assert (tmp_path / "_outputs" / "surface" / "xrun.sqlite").is_file()
    assert not (tmp_path / "_outputs" / "xrun.sqlite").exists()  # nothing went to the default store


@pytest.mark.slow
def test_adaptive_vs_designed_runs_quotes_what_the_code_prints_and_finds_the_known_peak(tmp_path) -> None:
    """The designed (central composite) and the adaptive (TPE + successive
    halving) study of experiments/peak.py (issue 37): the page's blocks are
    current, its side-by-side table quotes them, and both answers are near
    the known peak."""
    import json
    import sys

    from click.testing import CliRunner

    from xdoe.cli._xrun import main

    script = _script()
    _check(script, "adaptive", tmp_path)
    text = script.PAGES["adaptive"][0].read_text("utf-8")
    blocks = "\n".join(script.readme_blocks(text).values())
    side = text.split("## Side by side", 1)[1]
    spans = [s for s in re.findall(r"`([^`]+)`", side) if re.search(r"\d", s)]
    assert len(spans) >= 8 and [s for s in spans if s not in blocks] == []
    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        import peak
    finally:
        sys.path.remove(str(ROOT / "experiments"))

    def analysis(name: str) -> dict:
        done = CliRunner().invoke(main, ["analyze", str(tmp_path / "_outputs" / name), "--format", "json"])
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout[done.stdout.index("{"):done.stdout.rindex("}") + 1])

    surface = analysis("peak-ccd")["surface"]
    found = surface["stationary_point"]
    found = found.get("natural", found) if isinstance(found, dict) else found
    assert surface["kind"] == "maximum" and peak.truth(found["x1"], found["x2"]) > peak.MAXIMUM - 0.05
    adaptive = analysis("peak-adaptive")["optuna"]
    assert peak.truth(**adaptive["best"]["levels"]) > peak.MAXIMUM - 0.05
    assert adaptive["spent"]["pruned"] > 0 and adaptive["spent"]["steps"] < 22 * 40  # fewer steps than the CCD
