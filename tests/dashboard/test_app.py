"""The application without a browser (httpx through FastAPI's TestClient):
write actions need the token, read-only refuses them, paths from the
browser stay in the working directory, the password is never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dashboard_helpers import client, taxi_run, write_runs
from xdoe.dashboard import Settings
from xdoe.dashboard._settings import inside
from xdoe.errors import InputError
from xdoe.execution import run


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    doc = taxi_run("tiny-0", "tiny", 5, test_episodes=2)
    write_runs(tmp_path / "runs", [doc])
    run(doc, store=f"sqlite:///{tmp_path / 'xrun.sqlite'}", results=tmp_path / "results")
    return tmp_path


def _client(workdir: Path, *, token: bool = True, **kw: object) -> TestClient:
    settings = Settings(store_url=f"sqlite:///{workdir / 'xrun.sqlite'}", workdir=workdir,
                        token="secret-token", **kw)  # type: ignore[arg-type]
    return client(settings, token=token)


def test_pages_answer(workdir: Path) -> None:
    with _client(workdir) as c:
        for url in ["/", "/campaigns/tiny", "/runs/tiny-0", "/compare?runs=tiny-0", "/tree",
                    "/fragments/campaigns", "/fragments/campaigns/tiny/runs?sort=response",
                    "/fragments/campaigns/tiny/effects", "/fragments/runs/tiny-0/status",
                    "/fragments/tree/tiny-0", "/api/tree?experiment=tiny", "/vendor/plotly.min.js",
                    "/static/htmx.min.js"]:
            assert c.get(url).status_code == 200, url
        assert c.get("/runs/nope").status_code == 404
        assert c.get("/campaigns/nope").status_code == 404
        curves = c.get("/api/instances/1/curves").json()
        assert curves["status"] == "finished"
        assert [len(s["x"]) for s in curves["series"]] == [5, 2]


def test_write_actions_need_the_token(workdir: Path) -> None:
    with _client(workdir, token=False) as c:
        for url in ["/actions/instances/1/stop", "/actions/start", "/actions/runs/tiny-0/branch"]:
            refused = c.post(url, content="folder=runs",
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert refused.status_code == 403, url
            assert "token" in refused.json()["detail"]
        assert c.post("/actions/instances/1/stop", headers={"X-Xdoe-Token": "wrong", **FORM}).status_code == 403
        # the token: by header, or by the cookie set when a page is opened with ?token=
        assert c.post("/actions/instances/1/stop",
                      headers={"X-Xdoe-Token": "secret-token", **FORM}).status_code == 409
        c.get("/?token=secret-token")
        assert c.post("/actions/instances/1/stop", headers=FORM).status_code == 409  # finished: nothing to stop
        outside = c.post("/actions/start", content="folder=../..",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert outside.status_code == 400 and "outside the working directory" in outside.text


def test_read_only_refuses_every_action_and_hides_the_buttons(workdir: Path) -> None:
    with _client(workdir, read_only=True) as c:
        refused = c.post("/actions/instances/1/stop", headers={"X-Xdoe-Token": "secret-token", **FORM})
        assert refused.status_code == 403 and "read-only" in refused.text
        page = c.get("/").text
        assert "Start a campaign" not in page and "read-only" in page


def test_the_store_password_is_never_shown(tmp_path: Path) -> None:
    from xdoe.store import mask_url

    settings = Settings(store_url="postgresql+psycopg://me:hunter2@db.invalid/xdoe", workdir=tmp_path)
    with client(settings) as c:
        page = c.get("/compare").text  # the header names the store; no run asked, no connection made
    assert "hunter2" not in page and "me:***@db.invalid" in page
    assert mask_url(settings.store_url) == "postgresql+psycopg://me:***@db.invalid/xdoe"


def test_the_dashboard_never_creates_a_store(tmp_path: Path) -> None:
    path = tmp_path / "nothing" / "xrun.sqlite"
    with client(Settings(store_url=f"sqlite:///{path}", workdir=tmp_path)) as c:
        page = c.get("/")
        assert page.status_code == 200 and "no store yet" in page.text and "Start a campaign" in page.text
        assert c.get("/runs/x").status_code == 404
    assert not path.exists() and not path.parent.exists()


def test_paths_from_the_browser_stay_in_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert inside(tmp_path, "a") == (tmp_path / "a").resolve()
    for bad in ["..", "../x", "/etc", "a/../../x"]:
        with pytest.raises(InputError):
            inside(tmp_path, bad)
    (tmp_path / "link").symlink_to("/tmp")
    with pytest.raises(InputError):
        inside(tmp_path, "link")


def test_the_tree_graph_draws_an_edge_for_a_loaded_brain(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    parent = taxi_run("tree-0", "tree", 5, test_episodes=1)
    child = taxi_run("tree-1", "tree", 5, test_episodes=1)
    child["schedule"][0]["training"]["agents"][0]["load"] = {
        "agent": "learner", "experiment_run": "tree-0", "phase": "training"}
    for doc in (parent, child):
        assert run(doc, store=url, results=tmp_path / "results").status == "finished"
    with client(Settings(store_url=url, workdir=tmp_path)) as c:
        graph = c.get("/api/tree?experiment=tree").json()
    assert graph["edges"] == [["tree-0", "tree-1", "checkpoint"]]
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes["tree-1"]["x"] > nodes["tree-0"]["x"]  # a layer further
    assert any("tree-0" in s for s in nodes["tree-1"]["sources"])


def test_the_command_refuses_a_runs_folder_outside_the_working_directory(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from xdoe.cli._xrun import main

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["dashboard", "--store", f"sqlite:///{tmp_path / 'x.sqlite'}",
                                       "--runs", "/etc"])
    assert result.exit_code == 2
    assert "outside the working directory" in result.output and "Traceback" not in result.output


def test_a_failed_run_shows_its_error_and_traceback(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    doc = taxi_run("broken-0", "broken", 5)
    doc["schedule"][0]["training"]["agents"][0]["brain"]["params"] = {"alpha": "fast"}
    assert run(doc, store=url, results=tmp_path / "results").status == "failed"
    with client(Settings(store_url=url, workdir=tmp_path)) as c:
        page = c.get("/runs/broken-0").text
        table = c.get("/fragments/campaigns/broken/runs").text
    assert 'id="traceback"' in page and "Traceback (most recent call last)" in page
    assert 'data-status="failed"' in table


def test_a_bad_branch_is_refused_before_any_process_starts(workdir: Path) -> None:
    """Unknown run, bad episodes, both episodes and steps, an unknown key:
    400 with the reason; no process, no document, no session tree."""
    from xdoe.store import Store

    form = {"Content-Type": "application/x-www-form-urlencoded", "X-Xdoe-Token": "secret-token"}
    with _client(workdir) as c:
        for url, body, reason in [
            ("/actions/runs/tiny-1/branch", "set=", "did you mean: tiny-0"),
            ("/actions/runs/tiny-0/branch", "episodes=-3", "positive integer"),
            ("/actions/runs/tiny-0/branch", "episodes=3&steps=30", "not both"),
            ("/actions/runs/tiny-0/branch", "set=muscle.params.epsilom%3D0.2", "muscle.params.epsilon"),
            ("/actions/runs/tiny-0/branch", "phase=warmup", "its phases: training, testing"),
        ]:
            refused = c.post(url, content=body, headers=form)
            expected = 422 if body == "episodes=-3" else 400  # a field out of range: the model refuses it
            assert refused.status_code == expected and reason in refused.text, (body, refused.text)
        assert c.app.state.launcher.launches == []
        assert c.get("/api/tree?tree=nope").json()["nodes"] == []
    assert not list(workdir.rglob("run-tiny-0_b*.yaml"))
    with Store(f"sqlite:///{workdir / 'xrun.sqlite'}", create=False) as s:
        assert s.sessions.session_trees() == []
