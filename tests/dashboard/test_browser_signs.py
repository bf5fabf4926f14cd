"""The dashboard in headless Chromium shows the sign ``xrun analyze`` prints
(issue 32): a two-level factor listed high level first (``levels: [1, 0]``)
has effect high - low = -3 in the CLI on the output folder, on the store
alone, and on the campaign page, which reads only the store (the design's
coding xrun recorded there from the manifest)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dashboard_helpers import BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, Dashboard

pytestmark = BROWSER_MARKS
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))  # the known-truth studies

from doe_truth import reversed_screening_document, run_folder  # noqa: E402


def test_the_campaign_page_signs_effects_as_the_command_line(tmp_path: Path) -> None:
    from xdoe.analysis import fmt_num
    from xdoe.cli._xrun import main as xrun
    from xdoe.design.runfiles import generate

    out = tmp_path / "out"
    generate(reversed_screening_document(), out)
    url = run_folder(out)
    folder = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    store = CliRunner().invoke(xrun, ["analyze", "--store", url, "-e", "reversed", "--format", "json"])
    assert folder.exit_code == 0 and store.exit_code == 0, folder.output + store.output
    effects = {f["name"]: f["effect"] for f in json.loads(folder.stdout)["factors"]}
    assert effects == {f["name"]: f["effect"] for f in json.loads(store.stdout)["factors"]}
    assert effects["a"] == pytest.approx(-3.0, abs=0.15)
    dashboard = Dashboard(tmp_path, url, store_file=True)
    try:
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(dashboard.url)
            page.goto(dashboard.base + "/campaigns/reversed")
            table = page.locator("#effects-table")
            table.wait_for(timeout=60_000)
            headers = [h.inner_text() for h in table.locator("thead th").all()]
            column = headers.index("effect (high - low)")
            shown = {}
            for row in table.locator("tbody tr").all():
                cells = [c.inner_text() for c in row.locator("td").all()]
                shown[cells[1]] = cells[column]
            assert shown == {name: fmt_num(effect) for name, effect in effects.items()}
            title = page.locator("#effects h3").first.inner_text()
            assert "two-level screening: Lenth's PSE" in title
            browser.close()
            assert not errors, errors
    finally:
        dashboard.stop()
