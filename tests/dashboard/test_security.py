"""The dashboard's door without a browser (issue 25, items 1-3): Host
header, token on reads, same-origin actions with a form or JSON body,
security headers on every response, 4xx for malformed ids and paths, run
files (links too) inside the launch root, the store URL out of ``ps``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dashboard_helpers import client, taxi_run, write_runs
from xdoe.dashboard import Settings
from xdoe.errors import InputError
from xdoe.execution import run

PORT = 8765
OWN = f"http://127.0.0.1:{PORT}"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("door")
    doc = taxi_run("door-0", "door", 5, test_episodes=2)
    write_runs(root / "runs", [doc])
    run(doc, store=f"sqlite:///{root / 'xrun.sqlite'}", results=root / "results")
    return root


def _settings(workdir: Path, **kw: object) -> Settings:
    return Settings(store_url=f"sqlite:///{workdir / 'xrun.sqlite'}", workdir=workdir, token="s3cret",
                    port=PORT, **kw)  # type: ignore[arg-type]


READS = ["/", "/campaigns/door", "/runs/door-0", "/compare?runs=door-0", "/tree", "/fragments/campaigns",
         "/fragments/campaigns/door/runs", "/fragments/runs/door-0/status", "/api/tree?experiment=door",
         "/api/instances/1/curves", "/fragments/tree/door-0"]


def test_only_the_hosts_it_was_started_for_are_answered(workdir: Path) -> None:
    with client(_settings(workdir)) as c:
        for host in [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}"]:
            assert c.get("/", headers={"Host": host}).status_code == 200, host
        for host in [f"evil.example:{PORT}", "127.0.0.1:1", "127.0.0.1", f"127.0.0.1:{PORT}.evil.example", ""]:
            refused = c.get("/", headers={"Host": host})
            assert refused.status_code == 400 and "Host" in refused.text, host
            assert "door" not in refused.text
    with client(_settings(workdir, host="::1", allowed_hosts=("xdoe.example",))) as c:
        for host in [f"[::1]:{PORT}", f"xdoe.example:{PORT}"]:
            assert c.get("/", headers={"Host": host}).status_code == 200, host


def test_every_response_carries_the_security_headers(workdir: Path) -> None:
    with client(_settings(workdir)) as c:
        answers = [c.get("/"), c.get("/static/app.js"), c.get("/runs/nope"), c.get("/", headers={"Host": "x:1"}),
                   c.get("/", headers={"X-Xdoe-Token": "wrong"}), c.get("/api/instances/1/curves")]
        with client(_settings(workdir), token=False) as anonymous:
            answers.append(anonymous.get("/"))
    assert [a.status_code for a in answers] == [200, 200, 404, 400, 403, 200, 403]
    for a in answers:
        csp = a.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-eval" not in csp
        assert a.headers["X-Frame-Options"] == "DENY"
        assert a.headers["Referrer-Policy"] in ("no-referrer", "same-origin")
        assert a.headers["X-Content-Type-Options"] == "nosniff"


def test_reads_need_the_token_unless_read_only_and_public(workdir: Path) -> None:
    with client(_settings(workdir), token=False) as c:
        for url in READS:
            refused = c.get(url)
            assert refused.status_code == 403 and "token" in refused.text, url
            assert "door-0" not in refused.text and "Traceback" not in refused.text
        assert c.get("/static/htmx.min.js").status_code == 200  # the app's own files, no data
        assert c.get("/", headers={"X-Xdoe-Token": "s3cret"}).status_code == 200
        assert c.get("/?token=s3cret").status_code == 200  # sets the cookie of this port
        assert c.cookies.get(f"xdoe_token_{PORT}") == "s3cret"
        assert c.get("/runs/door-0").status_code == 200
    with client(_settings(workdir, read_only=True, public=True), token=False) as c:
        for url in READS:
            assert c.get(url).status_code == 200, url
        refused = c.post("/actions/instances/1/stop", headers=FORM)
        assert refused.status_code == 403
    with pytest.raises(InputError, match="--public needs --read-only"):
        _settings(workdir, public=True)


def test_actions_need_the_same_origin_and_a_form_or_json_body(workdir: Path) -> None:
    with client(_settings(workdir), origin=False) as c:
        stop = "/actions/instances/1/stop"
        for headers in [{"Origin": "http://127.0.0.1:8762"}, {"Origin": "null"}, {},
                        {"Referer": "http://127.0.0.1:8762/attack.html"},
                        {"Origin": f"http://localhost:{PORT}"}]:  # another origin, though the same server
            refused = c.post(stop, headers={**FORM, **headers})
            assert refused.status_code == 403 and "origin" in refused.json()["detail"].lower(), headers
        assert c.post(stop, headers={**FORM, "Origin": OWN}).status_code == 409  # finished: nothing to stop
        assert c.post(stop, headers={**FORM, "Referer": f"{OWN}/runs/door-0"}).status_code == 409
        for kind in ["text/plain", "text/plain;charset=UTF-8", None]:
            headers = {"Origin": OWN, **({"Content-Type": kind} if kind else {})}
            refused = c.post("/actions/start", content="folder=runs", headers=headers)
            assert refused.status_code == 415, kind
        as_json = c.post("/actions/start", content=json.dumps({"folder": "../.."}),
                         headers={"Origin": OWN, "Content-Type": "application/json"})
        assert as_json.status_code == 400 and "outside the working directory" in as_json.text
        assert c.post("/actions/start", content="[1]", headers={"Origin": OWN, "Content-Type": "application/json"}
                      ).status_code == 400
        assert c.app.state.launcher.launches == []  # type: ignore[attr-defined]


def test_malformed_ids_and_paths_are_4xx_never_500(workdir: Path) -> None:
    with client(_settings(workdir)) as c:
        answers = {
            "NUL in the folder": c.post("/actions/start", content="folder=dummy%00/../../etc", headers=FORM),
            "a control character": c.post("/actions/start", content="folder=ru%01ns", headers=FORM),
            "a folder name too long": c.post("/actions/start", content="folder=" + "a" * 5000, headers=FORM),
            "an instance id beyond 64 bits": c.post(f"/actions/instances/{2**64}/stop", headers=FORM),
            "a negative instance id": c.post("/actions/instances/-1/stop", headers=FORM),
            "curves beyond 64 bits": c.get(f"/api/instances/{2**64}/curves"),
            "a cursor beyond 64 bits": c.get(f"/api/instances/1/curves?after={2**70}"),
            "a huge bin": c.get(f"/api/instances/1/curves?k={2**70}"),
            "NUL in a run uid": c.get("/runs/door%000"),
            "NUL in a query": c.get("/compare?runs=door%000"),
            "a huge instance query": c.get(f"/runs/door-0?instance={2**70}"),
            "a superscript digit": c.get("/runs/door-0?instance=%C2%B2"),
            "episodes as a superscript": c.post("/actions/runs/door-0/branch", content="episodes=%C2%B2",
                                                headers=FORM),
            "episodes beyond 64 bits": c.post("/actions/runs/door-0/branch", content=f"episodes={10**30}",
                                              headers=FORM),
            "a non-ASCII token": c.get("/", headers={"X-Xdoe-Token": "s3cr\u00e9t".encode()}),
        }
        statuses = {what: a.status_code for what, a in answers.items()}
    assert all(400 <= s < 500 or s == 200 for s in statuses.values()), statuses
    assert statuses["NUL in the folder"] == 400 and statuses["a folder name too long"] == 400
    assert statuses["an instance id beyond 64 bits"] in (404, 422)
    assert statuses["a huge instance query"] == 200 and statuses["a superscript digit"] == 200
    assert not (workdir / "dashboard-logs").exists() and not (workdir / "_outputs").exists()


def test_a_run_file_linking_outside_the_launch_root_is_not_started(workdir: Path, tmp_path: Path) -> None:
    outside = write_runs(tmp_path / "elsewhere", [taxi_run("far-0", "far", 3)])[0]
    folder = workdir / "runs" / "linked"
    folder.mkdir(parents=True)
    (folder / "run-far-0.yaml").symlink_to(outside)
    with client(_settings(workdir, runs_dir=Path("runs"))) as c:
        refused = c.post("/actions/start", content="folder=runs/linked", headers=FORM)
        assert refused.status_code == 400 and "outside" in refused.text and "nothing started" in refused.text
        elsewhere = c.post("/actions/start", content="folder=.", headers=FORM)  # the working dir, not runs/
        assert elsewhere.status_code == 400 and "outside the folder of run documents" in elsewhere.text
        assert c.app.state.launcher.launches == []  # type: ignore[attr-defined]
    (folder / "run-far-0.yaml").unlink()
    folder.rmdir()


def test_the_command_reads_the_store_url_from_a_file_and_refuses_public_alone(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from xdoe.cli._xrun import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    runner = CliRunner()
    result = runner.invoke(main, ["dashboard", "--public"])
    assert result.exit_code == 2 and "--public needs --read-only" in result.output
    (tmp_path / "store.url").write_text("sqlite:///x.sqlite\n")
    result = runner.invoke(main, ["dashboard", "--store", "sqlite:///y.sqlite", "--store-file", "store.url"])
    assert result.exit_code == 2 and "not both" in result.output
    (tmp_path / "empty.url").write_text("# nothing\n")
    result = runner.invoke(main, ["dashboard", "--store-file", "empty.url"])
    assert result.exit_code == 2 and "holds no store URL" in result.output
    result = runner.invoke(main, ["dashboard", "--store-file", "missing.url"])
    assert result.exit_code == 2 and "cannot read it" in result.output and "Traceback" not in result.output


def test_a_folder_started_from_the_browser_runs_only_its_manifests_files(tmp_path) -> None:
    """Issue 25 item 10 for the dashboard: run files an interrupted xgen
    extension added (no manifest lists them) are never started."""
    from pathlib import Path

    from xdoe.dashboard._launch import run_files
    from xdoe.design.runfiles import generate

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "runs"
    generate(root / "experiments" / "dummy.yaml", out)
    listed = sorted(out.glob("run-*.yaml"))
    stray = out / "run-dummy-study-9999.yaml"
    stray.write_bytes(listed[0].read_bytes())
    assert run_files(out) == listed and stray not in run_files(out)
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "mine.yaml").write_bytes(listed[0].read_bytes())
    assert run_files(loose) == [loose / "mine.yaml"]  # hand-written documents: every YAML file
