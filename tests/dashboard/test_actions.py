"""The actions' fields (issue 33, item 8): every out-of-range id or
integer is a 4xx, never a 500; an unknown field is refused (422) before
anything launches. The fields are pydantic models (``extra="forbid"``,
bounded ints), not hand checks."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dashboard_helpers import client, taxi_run, write_runs
from xdoe.dashboard import Settings
from xdoe.execution import run

FORM = {"Content-Type": "application/x-www-form-urlencoded", "X-Xdoe-Token": "t0ken"}
JSON = {"Content-Type": "application/json", "X-Xdoe-Token": "t0ken"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("actions")
    doc = taxi_run("act-0", "act", 3, test_episodes=1)
    write_runs(root / "runs", [doc])
    run(doc, store=f"sqlite:///{root / 'xrun.sqlite'}", results=root / "results")
    return root


def _settings(workdir: Path) -> Settings:
    return Settings(store_url=f"sqlite:///{workdir / 'xrun.sqlite'}", workdir=workdir, token="t0ken",
                    runs_dir=Path("runs"))


def _nothing_launched(c: Any, workdir: Path) -> None:
    assert c.app.state.launcher.launches == []
    assert not list(workdir.rglob("dashboard-logs")) and not list(workdir.rglob("run-act-0_b*.yaml"))


def test_out_of_range_ids_and_integers_are_4xx_never_500(workdir: Path) -> None:
    with client(_settings(workdir)) as c:
        answers = {
            "a 23-digit run id to branch": c.post(f"/actions/runs/{10**22 + 7}/branch", headers=FORM),
            "a 20-digit run id to branch": c.post(f"/actions/runs/{2**64}/branch", headers=FORM),
            "5,000-digit episodes": c.post("/actions/runs/act-0/branch", content="episodes=" + "9" * 5000,
                                           headers=FORM),
            "5,000-digit steps (JSON)": c.post("/actions/runs/act-0/branch",
                                               content=json.dumps({"steps": "7" * 5000}), headers=JSON),
            "episodes beyond 64 bits (JSON number)": c.post("/actions/runs/act-0/branch",
                                                            content=json.dumps({"episodes": 2**64}), headers=JSON),
            "zero steps": c.post("/actions/runs/act-0/branch", content="steps=0", headers=FORM),
            "a 23-digit instance to stop": c.post(f"/actions/instances/{10**22}/stop", headers=FORM),
        }
        statuses = {what: a.status_code for what, a in answers.items()}
        assert all(400 <= s < 500 for s in statuses.values()), statuses
        assert "no run instance" in answers["a 23-digit run id to branch"].text
        assert "5000 characters" in answers["5,000-digit episodes"].text  # the value is not echoed whole
        assert len(answers["5,000-digit episodes"].text) < 300
        for what in ("5,000-digit episodes", "5,000-digit steps (JSON)", "zero steps"):
            assert answers[what].status_code == 422 and "positive integer" in answers[what].text, what
        _nothing_launched(c, workdir)


def test_an_unknown_field_is_refused_before_anything_launches(workdir: Path) -> None:
    with client(_settings(workdir)) as c:
        for url, body, headers in [
            ("/actions/runs/act-0/branch", "episodes=2&episdoes=3", FORM),
            ("/actions/runs/act-0/branch", "set=brain.params.alpha%3D0.2&overrides=x", FORM),
            ("/actions/runs/act-0/branch", json.dumps({"episodes": 2, "force": "1"}), JSON),
            ("/actions/start", "folder=runs&jobs=4", FORM),
            ("/actions/instances/1/stop", "reason=now", FORM),
        ]:
            refused = c.post(url, content=body, headers=headers)
            assert refused.status_code == 422, (url, body, refused.text)
            assert "unknown field" in refused.json()["detail"], refused.text
        # a scalar field given twice is no list
        twice = c.post("/actions/runs/act-0/branch", content="episodes=2&episodes=3", headers=FORM)
        assert twice.status_code == 422
        _nothing_launched(c, workdir)


def test_known_fields_reach_the_launcher_as_typed_values(workdir: Path) -> None:
    calls: list[tuple[Any, ...]] = []

    def branch(node: str, overrides: list[str], **kw: Any) -> Any:
        calls.append((node, overrides, kw))  # nothing is launched in this test
        return SimpleNamespace(process=SimpleNamespace(pid=0), log="-")

    with client(_settings(workdir)) as c:
        c.app.state.launcher.branch = branch
        assert c.post("/actions/runs/act-0/branch", content="set=brain.params.alpha%3D0.2%0A%23 note&episodes=+4&"
                                                     "steps=&phase=training", headers=FORM).status_code == 200
        assert c.post("/actions/runs/act-0/branch", content=json.dumps({"episodes": 2}),
                      headers=JSON).status_code == 200
    assert calls == [("act-0", ["brain.params.alpha=0.2"], {"episodes": 4, "steps": None, "phase": "training"}),
                     ("act-0", [], {"episodes": 2, "steps": None, "phase": None})]
