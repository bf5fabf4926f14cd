"""xrun status: runs of an xgen output folder or of the store, each
finished, running, failed, interrupted, missing (or invalid), with counts."""

from __future__ import annotations

import datetime as _dt
import subprocess
import sys

from sqlalchemy import update

from campaign import EXPERIMENT, craft, document_of, execute, generate_campaign
from xdoe.store import RunInstance
from xdoe.store._liveness import dead_reason as is_stale
from xdoe.store.views._status import summarize


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_every_status_from_an_output_folder(tmp_path, store):
    out = tmp_path / "out"
    files = generate_campaign(out)
    results = tmp_path / "results"
    execute(files[0], store, results)  # the real executor: same content hash as the file
    craft(store, document_of(files[1]), results, "failed", error="ValueError: boom")
    craft(store, document_of(files[2]), results, None)  # running, this process: alive
    dead = craft(store, document_of(files[3]), results, None)  # running, process gone
    stale = craft(store, document_of(files[4]), results, None)  # running, old heartbeat elsewhere
    craft(store, document_of(files[5]), results, "interrupted", error="interrupted")
    # run 6: an older version of the document finished; the file changed since
    changed = dict(document_of(files[6]), seed=1)
    craft(store, changed, results, "finished")
    # run 7: failed once, then finished: finished
    craft(store, document_of(files[7]), results, "failed", error="x")
    craft(store, document_of(files[7]), results, "finished")
    old = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=600)
    with store.database.session(write=True) as s, s.begin():
        s.execute(update(RunInstance).where(RunInstance.id == dead.instance_id).values(pid=dead_pid()))
        s.execute(update(RunInstance).where(RunInstance.id == stale.instance_id)
                  .values(host="elsewhere", heartbeat=old))
    # run 8's file is gone but design.csv lists it; run 9's file is broken
    files[8].unlink()
    files[9].write_text("uid: [unclosed\n")

    status = store.views.campaign_status(out)
    by_run = {r.run: r for r in status.runs}
    uid = [f"dummy-study-{k:04d}" for k in range(16)]
    assert by_run[uid[0]].status == "finished" and by_run[uid[0]].instance_id is not None
    assert by_run[uid[1]].status == "failed" and by_run[uid[1]].reason == "ValueError: boom"
    assert by_run[uid[2]].status == "running"
    assert by_run[uid[3]].status == "interrupted" and "is gone" in by_run[uid[3]].reason
    assert by_run[uid[4]].status == "interrupted" and "no heartbeat" in by_run[uid[4]].reason
    assert by_run[uid[5]].status == "interrupted"
    assert by_run[uid[6]].status == "missing" and "document changed" in by_run[uid[6]].reason
    assert by_run[uid[7]].status == "finished" and by_run[uid[7]].instances == 2
    assert by_run[uid[8]].status == "missing" and by_run[uid[8]].reason == "no run file"
    assert by_run[uid[9]].status == "invalid" and by_run[uid[9]].design_point == 1
    assert all(by_run[u].status == "missing" and by_run[u].reason is None for u in uid[10:])
    assert status.counts == {"finished": 2, "running": 1, "failed": 1, "interrupted": 3,
                             "missing": 8, "invalid": 1}
    assert not status.all_finished
    assert [(r.design_point, r.repetition) for r in status.runs[:3]] == [(0, 0), (0, 1), (1, 0)]
    assert summarize(status.counts).startswith("16 runs: 2 finished, 1 running")
    # a longer timeout makes the old heartbeat acceptable
    assert {r.run: r.status for r in store.views.campaign_status(out, heartbeat_timeout=3600).runs}[
        uid[4]] == "running"


def test_store_runs_of_an_experiment(tmp_path, store):
    files = generate_campaign(tmp_path / "out")
    for path in files[:2]:
        execute(path, store, tmp_path / "results")
    craft(store, {"uid": "other-run", "experiment_uid": "other", "schedule": []},
          tmp_path / "results", "failed", error="nope")
    status = store.views.campaign_status(experiment=EXPERIMENT)
    assert [r.run for r in status.runs] == ["dummy-study-0000", "dummy-study-0001"]
    assert status.all_finished and status.counts["finished"] == 2
    everything = store.views.campaign_status()
    assert everything.counts["failed"] == 1 and not everything.all_finished


def test_is_stale():
    now = _dt.datetime(2030, 1, 1, tzinfo=_dt.timezone.utc)
    fresh = now - _dt.timedelta(seconds=10)
    assert is_stale("h", 1, fresh, fresh, now=now, hostname="other") is None
    assert "no heartbeat for 200 s" in is_stale("h", 1, None, now - _dt.timedelta(seconds=200),
                                                 now=now, hostname="other")
    assert "is gone" in is_stale("h", dead_pid(), fresh, fresh, now=now, hostname="h")


def test_status_reads_known_run_files_from_the_store(tmp_path, store, monkeypatch):
    """Issue 26: a run file whose bytes the store recorded is not parsed
    again; the answer is the one of parsing every file, also after a file
    is edited (parsed again: another version) or deleted."""
    import xdoe.documents as documents
    import xdoe.documents._run as run_module
    from xdoe.store.views._status import design_runs

    files = generate_campaign(tmp_path / "out")
    for path in files[:3]:
        execute(path, store, tmp_path / "results")
    parsed = []
    real = run_module.load_run_document
    counting = lambda p: parsed.append(p) or real(p)  # noqa: E731
    monkeypatch.setattr(run_module, "load_run_document", counting)
    monkeypatch.setattr(documents, "load_run_document", counting)  # the public name, however it was bound

    assert design_runs(tmp_path / "out", db=store.database) == design_runs(tmp_path / "out")
    from xdoe.store.views._status import version_rows

    assert design_runs(tmp_path / "out", db=store.database, versions=version_rows(store.database)) == design_runs(tmp_path / "out")
    parsed.clear()
    fast = store.views.campaign_status(tmp_path / "out")
    assert sorted(parsed) == files[3:]  # only the files never run
    assert fast.counts == {"finished": 3, "running": 0, "failed": 0, "interrupted": 0, "missing": len(files) - 3}

    files[0].write_text(files[0].read_text().replace("seed:", "seed: 7\n_old_seed:", 1))  # another version
    files[1].write_text(files[1].read_text() + "# a comment: other bytes, the same document\n")
    files[2].unlink()
    parsed.clear()
    after = {r.run: r for r in store.views.campaign_status(tmp_path / "out").runs}
    assert files[0] in parsed and files[1] in parsed
    assert after == {r.run: r for r in store.views.campaign_status(tmp_path / "out", include_branches=True).runs}
    uid0, uid1, uid2 = (document_of(f)["uid"] if f.exists() else f.stem[4:] for f in files[:3])
    assert after[uid0].status == "missing" and "document changed" in after[uid0].reason
    assert after[uid1].status == "finished"
    assert after[uid2].status == "missing" and after[uid2].reason == "no run file"


def _selects(action) -> tuple[object, list[str]]:
    """``action()``'s answer and the SELECT statements it sent to any engine."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    sent: list[str] = []

    def seen(conn, cursor, statement, *rest):  # noqa: ANN001, ANN002
        if statement.lstrip().upper().startswith("SELECT"):
            sent.append(statement)

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        return action(), sent
    finally:
        event.remove(Engine, "before_cursor_execute", seen)


def test_the_status_of_a_folder_is_one_query(tmp_path, store):
    """Issue 26.1: the run versions are read once, with their instances'
    warnings and their files' hashes: no look-up of the files' hashes (in IN
    lists of 500: twenty queries at 10,000 runs) and no second query for the
    warnings of the chosen instances."""
    out = tmp_path / "out"
    files = generate_campaign(out)
    for path in files[:2]:
        execute(path, store, tmp_path / "results")
    for experiment in (None, EXPERIMENT):  # every run file, or those the manifest lists
        status, sent = _selects(lambda: store.views.campaign_status(out, experiment))
        assert status.counts["finished"] == 2 and status.counts["missing"] == len(files) - 2
        runs = [q for q in sent if "FROM run" in q]  # (besides the session tree's nodes, when it has a table)
        assert len(runs) == 1 and "file_sha256" in runs[0] and "warnings" in runs[0], sent


def test_the_warnings_are_those_of_the_instance_the_status_comes_from(tmp_path, store):
    """The warnings come with the instance the status is decided from (the
    newest, or the newest finished one), in the same query (issue 26.1)."""
    from xdoe.store.schema import _tables as t

    out = tmp_path / "out"
    files = generate_campaign(out)
    results = tmp_path / "results"
    done = craft(store, document_of(files[0]), results, "finished")  # finished, then failed: finished
    later = craft(store, document_of(files[0]), results, "failed", error="x")
    failed = craft(store, document_of(files[1]), results, "failed", error="y")
    quiet = craft(store, document_of(files[2]), results, "finished")
    with store.database.engine.begin() as conn:
        for rec, lines in ((done, ["done 1", "done 2"]), (later, ["later"]), (failed, ["failed"])):
            conn.execute(update(t.run_instance).where(t.run_instance.c.id == rec.instance_id).values(warnings=lines))
    uids = [document_of(f)["uid"] for f in files[:3]]
    for status in (store.views.campaign_status(out), store.views.campaign_status(experiment=EXPERIMENT)):
        by_run = {r.run: r for r in status.runs}
        assert (by_run[uids[0]].status, by_run[uids[0]].instance_id, by_run[uids[0]].warnings) == (
            "finished", done.instance_id, ("done 1", "done 2"))
        assert (by_run[uids[1]].status, by_run[uids[1]].warnings) == ("failed", ("failed",))
        assert (by_run[uids[2]].status, by_run[uids[2]].warnings) == ("finished", ())
    one = store.views.campaign_status(run=uids[1], include_branches=True).runs
    assert [(r.run, r.warnings) for r in one] == [(uids[1], ("failed",))]


def test_a_manifests_files_are_those_present_in_the_folder(tmp_path, store):
    """With ``-e`` the run files are the manifest's that are files in the
    folder (as ``os.path.isfile``; listed once, not a stat per name): a
    deleted one, or a folder in its place, is a run without a file."""
    out = tmp_path / "out"
    files = generate_campaign(out)
    execute(files[0], store, tmp_path / "results")
    files[1].unlink()
    assert store.views.campaign_status(out, EXPERIMENT).runs == store.views.campaign_status(out).runs
    files[2].unlink()
    files[2].mkdir()
    by_run = {r.run: r for r in store.views.campaign_status(out, EXPERIMENT).runs}
    for path in files[1:3]:
        assert (by_run[path.stem[4:]].status, by_run[path.stem[4:]].reason) == ("missing", "no run file")
    assert by_run[files[0].stem[4:]].status == "finished"
    assert {r.file for r in by_run.values() if r.file} == {str(f) for f in files if f.is_file()}
