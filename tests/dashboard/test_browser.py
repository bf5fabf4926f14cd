"""The dashboard in headless Chromium against a real SQLite store while a
campaign runs in a background ``xrun experiment-start`` process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard_helpers import CHROMIUM, CHROMIUM_ARGS, Dashboard, env, taxi_run, wait_for, write_runs

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium chromium-driver)"),
]
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


class Campaign:
    """A tmp working directory, its store, a campaign running in the
    background (one short run, then a long one) and the dashboard."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.store_url = f"sqlite:///{workdir / '_outputs' / 'xrun.sqlite'}"
        files = write_runs(workdir / "_outputs" / "live", [
            taxi_run("live-0", "live", 300, alpha=0.5),
            taxi_run("live-1", "live", 500_000, alpha=0.9),
        ])
        write_runs(workdir / "_outputs" / "later", [taxi_run("later-0", "later", 200, test_episodes=3)])
        self.campaign = subprocess.Popen(
            [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet", "--store",
             self.store_url, *[str(f.relative_to(workdir)) for f in files]],
            cwd=workdir, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.dashboard = Dashboard(workdir, self.store_url, "--runs", "_outputs")

    def store(self) -> Any:
        from xdoe.store import Store

        return Store(self.store_url)

    def instance_of(self, uid: str) -> Any:
        with self.store() as s:
            return s.latest_instance(uid)

    def close(self) -> None:
        self.dashboard.stop()
        if self.campaign.poll() is None:
            self.campaign.terminate()
            self.campaign.wait(30)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Campaign]:
    c = Campaign(tmp_path_factory.mktemp("dashboard"))
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """A browser page that collects console errors and uncaught exceptions."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.base = base
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.context.close()

    def open(self, path: str) -> Any:
        response = self.page.goto(self.base + path)
        assert response is not None and response.ok, path
        return self.page


def _running(campaign: Campaign, uid: str, status: str = "running") -> Any:
    """The newest instance of ``uid`` once it has ``status``."""
    return wait_for(lambda: (i := campaign.instance_of(uid)) is not None and i.status == status and i,
                    timeout=60)


def test_every_page_renders_without_console_errors(campaign: Campaign, browser: Any) -> None:
    _running(campaign, "live-1")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open("/")
        row = page.locator("#campaigns-table tr[data-experiment='live']")
        row.wait_for()
        assert row.locator(".count.finished").inner_text() == "1"
        assert row.locator(".count.running").inner_text() == "1"
        page.click("text=live")
        page.wait_for_url("**/campaigns/live")
        assert page.locator("#runs-table tbody tr").count() == 2
        page.select_option("#status", "running")
        page.wait_for_function("document.querySelectorAll('#runs-table tbody tr').length === 1")
        assert page.locator("#runs-table tbody tr").get_attribute("data-run") == "live-1"
        page.locator("#effects-table, #effects .hint").first.wait_for()
        page = p.open("/runs/live-0")
        page.wait_for_function("Number(document.querySelector('#curves').dataset.points) >= 300")
        assert page.locator("#phases tbody tr").count() == 2
        assert page.locator("#checkpoints tbody tr").count() >= 1
        assert "QLearningBrain" in page.locator("pre.document").inner_text()
        page = p.open("/compare?runs=live-0&runs=live-1")
        page.wait_for_function("document.querySelectorAll('#curves .scatterlayer .trace').length >= 4")
        page = p.open("/tree?experiment=live")
        page.wait_for_function("document.querySelector('#tree-graph').dataset.nodes === '2'")
        box = page.locator("#tree-graph .point").first.bounding_box()  # click as a user does
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.locator("#node h2").wait_for()
        page.wait_for_function("Number(document.querySelector('#node [data-curves]').dataset.points) > 0")
        assert not p.errors, p.errors


def test_a_curve_gains_points_while_the_run_progresses(campaign: Campaign, browser: Any) -> None:
    _running(campaign, "live-1")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open("/runs/live-1")
        page.wait_for_function("Number(document.querySelector('#curves').dataset.points) > 0")
        first = int(page.locator("#curves").get_attribute("data-points"))
        page.wait_for_function(f"Number(document.querySelector('#curves').dataset.points) > {first}",
                               timeout=20_000)
        assert not p.errors, p.errors


def test_a_stop_without_the_token_is_refused(campaign: Campaign, browser: Any) -> None:
    inst = _running(campaign, "live-1")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open("/runs/live-1")  # no ?token=
        page.on("dialog", lambda d: d.accept())
        page.click("#stop-button")
        page.locator("#action-error").wait_for()
        assert "token" in page.locator("#action-error").inner_text()
    assert campaign.instance_of("live-1").status == "running"
    with campaign.store() as s:
        from xdoe.store import stop_requested

        assert stop_requested(s, inst.id) is None


def test_a_stop_from_the_browser_leaves_the_run_interrupted_and_resumable(
        campaign: Campaign, browser: Any) -> None:
    from xdoe.execution._resume import decide

    inst = _running(campaign, "live-1")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open(f"/runs/live-1?token={campaign.dashboard.token}")
        page.on("dialog", lambda d: d.accept())
        page.click("#stop-button")
        page.locator("#messages .message:not(.error)").wait_for()
        page.wait_for_function("document.querySelector('#run-state').textContent.trim() === 'interrupted'",
                               timeout=20_000)
        assert not p.errors, p.errors
    assert campaign.instance_of("live-1").status == "interrupted"
    with campaign.store() as s:
        assert decide(s, "live-1", inst.content_hash).action == "resume"
    assert campaign.campaign.wait(30) == 1  # the campaign ends: a run did not finish


def test_a_campaign_started_from_the_browser_finishes_and_appears(campaign: Campaign, browser: Any) -> None:
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open(f"/?token={campaign.dashboard.token}")
        page.fill("#folder", "_outputs/later")
        page.click("#start-form button")
        page.locator("#start-result .message:not(.error)").wait_for()
        page.locator("#launches .launch-state").first.wait_for(timeout=5_000)  # listed at once
        row = page.locator("#campaigns-table tr[data-experiment='later']")
        row.wait_for(timeout=30_000)
        page.wait_for_function(
            "(r => r && r.querySelector('.count.finished').textContent.trim() === '1')"
            "(document.querySelector(\"#campaigns-table tr[data-experiment='later']\"))", timeout=60_000)
        # the process exits a moment after its run is recorded finished: wait for
        # the (self-refreshing) launch list to say so, never for a fixed time
        page.wait_for_function(
            "document.querySelector('#launches .launch-state').textContent.trim() !== 'running'",
            timeout=30_000)
        assert page.locator("#launches .launch-state").first.inner_text() == "finished"
        assert not p.errors, p.errors
    assert campaign.instance_of("later-0").status == "finished"


def _open_node(page: Any, uid: str) -> None:
    """Wait for the node panel of ``uid`` (opened by ``?node=``)."""
    page.locator("#node h2 a", has_text=uid).wait_for(timeout=20_000)


def test_a_branch_without_the_token_is_refused(campaign: Campaign, browser: Any) -> None:
    _running(campaign, "live-0", "finished")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open("/tree?node=live-0")  # no ?token=
        _open_node(page, "live-0")
        page.fill("#branch-set", "brain.params.alpha=0.3")
        page.click("#branch-form button")
        page.locator("#branch-result #action-error").wait_for()
        assert "token" in page.locator("#action-error").inner_text()
    assert not list((campaign.workdir / "_outputs").rglob("run-live-0_b*.yaml"))
    with campaign.store() as s:
        from xdoe.store import session_trees

        assert session_trees(s) == []


def test_an_unknown_override_key_shows_its_close_matches(campaign: Campaign, browser: Any) -> None:
    _running(campaign, "live-0", "finished")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open(f"/tree?node=live-0&token={campaign.dashboard.token}")
        _open_node(page, "live-0")
        page.fill("#branch-set", "brain.params.alpah=0.3")
        page.click("#branch-form button")
        page.locator("#branch-result .message.error").wait_for()
        text = page.locator("#branch-result").inner_text()
        assert "alpah" in text and "brain.params.alpha" in text, text
    assert not list((campaign.workdir / "_outputs").rglob("run-live-0_b*.yaml"))


def test_a_branch_from_the_browser_runs_and_appears_in_the_session_tree(
        campaign: Campaign, browser: Any) -> None:
    from xdoe.store import session_nodes

    _running(campaign, "live-0", "finished")
    with Page(browser, campaign.dashboard.base) as p:
        page = p.open(f"/tree?node=live-0&token={campaign.dashboard.token}")
        _open_node(page, "live-0")
        page.fill("#branch-set", "brain.params.alpha=0.3\nmuscle.params.epsilon=0.05")
        page.fill("#branch-episodes", "20")
        page.click("#branch-form button")
        page.locator("#branch-result .message:not(.error)").wait_for()
        # the open page (the lineage of "live": no session tree yet) shows the child without a reload
        page.wait_for_function("JSON.parse(document.querySelector('#tree-graph').dataset.health || '{}')"
                               "['live-0_b01'] === 'finished'", timeout=90_000)
        tree = wait_for(lambda: [n for n in _nodes(campaign) if n.run_uid == "live-0_b01"
                                 and n.health in ("healthy", "dead")], timeout=30)[0]
        page = p.open("/tree")  # a store with session trees opens on the first one
        page.wait_for_function("document.querySelector('#tree-graph').dataset.nodes === '2'")
        health = json.loads(page.locator("#tree-graph").get_attribute("data-health"))
        assert health == {"live-0": "healthy", "live-0_b01": tree.health}, health
        assert "alpha=0.3" in page.locator("#tree-graph .annotation-text").first.text_content()
        child = page.locator("#tree-graph .point").nth(1).bounding_box()  # click as a user does
        page.mouse.click(child["x"] + child["width"] / 2, child["y"] + child["height"] / 2)
        page.locator("#node h2 a", has_text="live-0_b01").wait_for()
        assert page.locator("#node-health").inner_text() == tree.health
        page.wait_for_function("Number(document.querySelector('#node [data-curves]').dataset.points) > 0")
        assert not p.errors, p.errors
    with campaign.store() as s:
        nodes = session_nodes(s, "live-0")
        assert [n.run_uid for n in nodes] == ["live-0", "live-0_b01"]
        assert nodes[1].parent_id == nodes[0].id and nodes[1].instance_status == "finished"
        assert [o["key"] for o in nodes[1].overrides] == ["brain.params.alpha", "muscle.params.epsilon"]


def _nodes(campaign: Campaign) -> list[Any]:
    from xdoe.store import session_nodes

    with campaign.store() as s:
        return session_nodes(s)
