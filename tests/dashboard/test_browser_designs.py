"""The campaign page in headless Chromium on designs whose answer is more
than a table: a response-surface study shows the contour of ``xrun plot
design`` (the same picture, byte for byte) beside the canonical analysis of
``xrun analyze``; a two-level study whose corner failed in every run shows
the ANOVA's numbers and the warnings of ``xrun analyze --format json`` (it
showed ``analysis unavailable: 'b'``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dashboard_helpers import BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, Dashboard, wait_for

pytestmark = BROWSER_MARKS
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))  # the known-truth studies

from doe_truth import corner_document, run_folder, surface_document  # noqa: E402


def _analyze(url: str, experiment: str) -> dict[str, Any]:
    from xdoe.cli._xrun import main as xrun

    out = CliRunner().invoke(xrun, ["analyze", "--store", url, "-e", experiment, "--format", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _shown_effects(page: Any) -> dict[str, str]:
    table = page.locator("#effects-table")
    table.wait_for(timeout=60_000)
    headers = [h.inner_text() for h in table.locator("thead th").all()]
    column = next(i for i, h in enumerate(headers) if h.startswith("effect"))
    rows = [[c.inner_text() for c in r.locator("td").all()] for r in table.locator("tbody tr").all()]
    return {cells[1]: cells[column] for cells in rows}


@pytest.fixture()
def browser() -> Any:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _page(browser: Any, dashboard: Dashboard) -> tuple[Any, list[str]]:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(dashboard.url)
    return page, errors


def test_a_surface_study_shows_its_contour_and_stationary_point(tmp_path: Path, browser: Any) -> None:
    from xdoe.analysis import fmt_num
    from xdoe.cli._xrun import main as xrun
    from xdoe.design.runfiles import generate

    out = tmp_path / "out"
    generate(surface_document(), out)
    url = run_folder(out)
    answer = _analyze(url, "surface")
    drawn = CliRunner().invoke(xrun, ["plot", "design", "--store", url, "-e", "surface", "-o",
                                      str(tmp_path / "contour.png")])
    assert drawn.exit_code == 0, drawn.output
    dashboard = Dashboard(tmp_path, url, store_file=True)
    try:
        page, errors = _page(browser, dashboard)
        page.goto(dashboard.base + "/campaigns/surface")
        figure = page.locator("#design-plot")
        figure.wait_for(timeout=60_000)
        assert "Fitted second-order surface" in figure.locator("figcaption").inner_text()
        src = figure.locator("img").get_attribute("src")
        picture = page.request.get(dashboard.base + src)
        assert picture.ok and picture.headers["content-type"] == "image/png"
        assert picture.body() == (tmp_path / "contour.png").read_bytes()  # the command's picture
        assert _shown_effects(page) == {f["name"]: fmt_num(f["effect"]) for f in answer["factors"]}
        canonical = page.locator("#effects").inner_text()
        point = answer["surface"]["stationary_point"]
        assert f"x1 = {fmt_num(point['x1'])}, x2 = {fmt_num(point['x2'])}" in canonical
        assert answer["surface"]["kind"] == "maximum" and "maximum" in canonical
        low, high = answer["surface"]["predicted_ci"]
        assert f"{fmt_num(answer['surface']['predicted'])} [{fmt_num(low)}, {fmt_num(high)}]" in canonical
        # the picture loads after the page (a loaded machine: seconds); waited for, not timed
        wait_for(lambda: page.evaluate("(img => img && img.complete && img.naturalWidth > 0)"
                                       "(document.querySelector('#design-plot img'))"), timeout=60)
        assert not errors, errors
    finally:
        dashboard.stop()


def test_a_two_level_study_with_a_failed_corner_shows_the_anova_and_says_why(tmp_path: Path,
                                                                               browser: Any) -> None:
    from xdoe.analysis import fmt_num
    from xdoe.cli._xrun import main as xrun
    from xdoe.design.runfiles import generate

    out = tmp_path / "out"
    generate(corner_document(), out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    done = CliRunner().invoke(xrun, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", url, "--results", str(out / "results")])
    assert done.exit_code == 1, done.output  # the corner's runs failed
    answer = _analyze(url, "corner")
    dashboard = Dashboard(tmp_path, url, store_file=True)
    try:
        page, errors = _page(browser, dashboard)
        page.goto(dashboard.base + "/campaigns/corner")
        assert _shown_effects(page) == {f["name"]: fmt_num(f["effect"]) for f in answer["factors"]}
        effects = page.locator("#effects").inner_text()
        assert "unavailable" not in effects and f"{answer['runs']} runs" in effects
        for warning in answer["warnings"]:
            assert warning in effects, warning
        assert page.locator("#design-plot").count() == 0  # the ANOVA has no design picture
        assert not errors, errors
    finally:
        dashboard.stop()
