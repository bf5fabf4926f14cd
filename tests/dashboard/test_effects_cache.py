"""The campaign page's analysis at cluster scale (issue 26): computed once
per state of the store (a reload without new rows reads no episode), off the
request for a large campaign (the page answers at once, says so, and asks
again until the figures are in), the same figures as ``xrun analyze``."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from dashboard_helpers import client
from xdoe.dashboard import Settings
from xdoe.store import Store
from xdoe.store.testing import fill_synthetic_campaign

pytest.importorskip("statsmodels")


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'effects.sqlite'}"
    with Store(url) as store:
        fill_synthetic_campaign(store, runs=40, episodes=10)
    return url


def _counting(monkeypatch: pytest.MonkeyPatch, gate: threading.Event | None = None) -> list[str]:
    import xdoe.analysis as analysis

    real = analysis.load_scores
    calls: list[str] = []

    def load_scores(store, response=None, experiment=None, **kw):  # type: ignore[no-untyped-def]
        calls.append(experiment)
        if gate is not None:
            assert gate.wait(60)
        return real(store, response, experiment, **kw)

    monkeypatch.setattr(analysis, "load_scores", load_scores)
    return calls


def test_the_analysis_is_computed_once_per_state_of_the_store(store_url, tmp_path, monkeypatch) -> None:
    from xdoe.analysis import Response, analyze, load_scores

    with Store(store_url) as store:
        expected = analyze(load_scores(store, Response(), "bench"))
    calls = _counting(monkeypatch)
    with client(Settings(store_url=store_url, workdir=tmp_path)) as c:
        first = c.get("/fragments/campaigns/bench/effects").text
        assert 'id="effects-table"' in first and "computing" not in first
        assert c.get("/fragments/campaigns/bench/effects").text == first
        assert 'id="effects-plot"' in c.get("/fragments/campaigns/bench/plots").text
        assert c.get("/campaigns/bench/plots/effects.png").status_code == 200
        assert calls == ["bench"]  # the reloads, the pictures: no second computation
        from xdoe.analysis import fmt_num

        for f in expected.factors:  # the figures of xrun analyze, as its table prints them
            assert f"<td>{f.name}</td>" in first and f'<td class="n">{fmt_num(f.eta_sq, 3)}</td>' in first
        with Store(store_url) as store:  # new rows: another state, computed again
            fill_synthetic_campaign(store, runs=2, episodes=10, experiment="other")
        assert c.get("/fragments/campaigns/bench/effects").text == first
        assert calls == ["bench", "bench"]


def test_a_large_campaign_answers_at_once_then_shows_the_figures(store_url, tmp_path, monkeypatch) -> None:
    import xdoe.dashboard._plots as plots

    monkeypatch.setattr(plots, "SYNC_RUNS", 10)  # 40 runs: a "large" campaign
    monkeypatch.setattr(plots, "WAIT_SECONDS", 0.05)
    gate = threading.Event()
    _counting(monkeypatch, gate)
    with client(Settings(store_url=store_url, workdir=tmp_path)) as c:
        started = time.monotonic()
        waiting = c.get("/fragments/campaigns/bench/effects").text
        assert time.monotonic() - started < 5  # the analysis is still held at the gate
        assert "computing the analysis of 40 runs" in waiting and 'id="effects-table"' not in waiting
        assert 'hx-trigger="load delay:2s"' in waiting  # the page asks again
        assert "computing" in c.get("/fragments/campaigns/bench/plots").text
        gate.set()
        for _ in range(600):
            page = c.get("/fragments/campaigns/bench/effects").text
            if 'id="effects-table"' in page:
                break
            time.sleep(0.1)
        assert 'id="effects-table"' in page and "computing" not in page and "hx-trigger" not in page
