"""Store conformance: opening, errors, re-opening, versions, queries, concurrency, schema."""

from __future__ import annotations

import multiprocessing
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from xdoe.errors import StoreError
from xdoe.store import BrainSource, Checkpoint, Claim, Episode, Store, document_hash, utcnow


def _record(store: Store, doc: dict[str, Any], root: Path, *, episodes: int = 2,
            status: str = "finished", flush_rows: int = 1000) -> int:
    rec = store.recorder(doc, results_root=root, flush_rows=flush_rows)
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    for episode in range(episodes):
        rec.episode_finished(0, episode, "learner", 5, float(episode), float(episode), 0.01)
    rec.finish(status)
    assert rec.instance_id is not None
    return rec.instance_id


def test_reopen_existing_store_and_run_versions(store_url: str, make_document: Any,
                                                tmp_path: Path) -> None:
    doc = make_document()
    with Store(store_url) as first:
        _record(first, doc, tmp_path, status="failed")
    with Store(store_url) as second:  # tables exist: opening again must keep them and their rows
        assert [r.uid for r in second.runs.versions()] == [doc["uid"]]
        assert second.runs.finished_run_hashes() == set()
        _record(second, doc, tmp_path)  # same document: a new instance of the same run
        assert len(second.runs.versions()) == 1
        assert second.runs.finished_run_hashes() == {(doc["uid"], document_hash(doc))}
        changed = make_document(alpha=0.7)  # same uid, changed document: a new run version
        _record(second, changed, tmp_path, status="interrupted")
        runs = second.runs.versions()
        assert [(r.uid, r.content_hash) for r in runs] == [
            (doc["uid"], document_hash(doc)), (doc["uid"], document_hash(changed))]
        assert second.runs.finished_run_hashes() == {(doc["uid"], document_hash(doc))}
        latest = second.runs.latest_instance(doc["uid"])
        assert latest is not None and latest.status == "interrupted"
        assert latest.content_hash == document_hash(changed)
        of_first = second.runs.latest_instance(doc["uid"], document_hash(doc))
        assert of_first is not None and of_first.status == "finished"
        assert [i.status for i in second.runs.instances(run_uid=doc["uid"])] == [
            "failed", "finished", "interrupted"]
        assert [i.status for i in second.runs.instances(status=["failed", "interrupted"])] == [
            "failed", "interrupted"]
        assert second.runs.latest_instance("no-such-run") is None


def test_runs_by_experiment_and_hand_written_documents(store: Store, make_document: Any,
                                                       tmp_path: Path) -> None:
    _record(store, make_document("a-0000", experiment="a"), tmp_path)
    _record(store, make_document("b-0000", experiment="b"), tmp_path)
    hand = {"uid": "by-hand", "schedule": []}  # palaestrAI shape: no experiment, no design point
    _record(store, hand, tmp_path)
    assert [r.uid for r in store.runs.versions("a")] == ["a-0000"]
    assert [r.uid for r in store.runs.versions()] == ["a-0000", "b-0000", "by-hand"]
    assert store.runs.experiments() == ["a", "b"]  # the read commands choose among these
    [by_hand] = [r for r in store.runs.versions() if r.uid == "by-hand"]
    assert (by_hand.experiment, by_hand.design_point, by_hand.seed, by_hand.levels) == (None, None, None, None)
    assert {r["run"] for r in store.runs.episodes(experiment="b")} == {"b-0000"}
    assert len(list(store.runs.episodes(run_uid="by-hand"))) == 2


def test_default_url_and_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    with Store() as default:
        assert default.url == "sqlite:///_outputs/xrun.sqlite"
    assert (tmp_path / "_outputs" / "xrun.sqlite").is_file()
    monkeypatch.setenv("XRUN_STORE", f"sqlite:///{tmp_path / 'elsewhere' / 'x.sqlite'}")
    with Store():
        pass
    assert (tmp_path / "elsewhere" / "x.sqlite").is_file()


def test_sqlite_connection_settings(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 's.sqlite'}") as store, store.database.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 10_000


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "cannot open store not a url"),
        ("nosuchdb://host/db", "cannot open store nosuchdb://host/db"),
        ("postgresql+nosuchdriver://u@localhost/db", "cannot open store postgresql+nosuchdriver"),
    ],
)
def test_bad_url_is_store_error(url: str, expected: str) -> None:
    with pytest.raises(StoreError, match=re.escape(expected)):
        Store(url)


def test_unreachable_server_masks_password() -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra: pip install 'xdoe[postgres]')")
    url = "postgresql+psycopg://alice:s3cret-pw@127.0.0.1:9/results"  # port 9 (discard): refused
    with pytest.raises(StoreError) as info:
        Store(url)
    message = str(info.value)
    assert "s3cret-pw" not in message
    assert "postgresql+psycopg://alice:***@127.0.0.1:9/results" in message
    assert "refused" in message.lower() or "connect" in message.lower()


def test_sqlite_path_under_a_file_is_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError, match="file/x.sqlite"):
        Store(f"sqlite:///{tmp_path / 'file' / 'x.sqlite'}")


def test_newer_schema_is_refused(store_url: str) -> None:
    from xdoe.store import StoreMeta

    with Store(store_url) as store, store.database.session(write=True) as session, session.begin():
        session.get(StoreMeta, "schema_version").value = "999"  # type: ignore[union-attr]
    with pytest.raises(StoreError, match="schema revision 0999, newer than"):
        Store(store_url)


def test_concurrent_stores_do_not_lose_rows(store_url: str, make_document: Any, tmp_path: Path) -> None:
    """Two Store objects on the same database, written from two threads at once,
    with many small transactions interleaving."""
    runs_per_thread, episodes = 3, 400
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def writer(name: str) -> None:
        try:
            with Store(store_url) as own:
                barrier.wait()
                for k in range(runs_per_thread):
                    # both threads record the same first run: concurrent get-or-create of run rows
                    uid = "shared-0000" if k == 0 else f"{name}-{k:04d}"
                    _record(own, make_document(uid, experiment="shared"), tmp_path / name,
                            episodes=episodes, flush_rows=25)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("t1", "t2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store(store_url) as store:
        with store.database.session() as session:
            total = session.execute(select(func.count()).select_from(Episode)).scalar_one()
        assert total == 2 * runs_per_thread * episodes
        assert len(store.runs.versions()) == 2 * runs_per_thread - 1
        assert len(store.runs.instances(status="finished")) == 2 * runs_per_thread


def test_checkpoint_lineage_and_claim_tables(store: Store, make_document: Any, tmp_path: Path) -> None:
    doc = make_document()
    instance_id = _record(store, doc, tmp_path)
    now = utcnow()
    with store.database.session(write=True) as session, session.begin():
        checkpoint = Checkpoint(instance_id=instance_id, agent="learner", step=1000, episode=20,
                                path="agents/0-training/learner/ep20.pkl", sha256="0" * 64,
                                metric=-3.5, best=True)
        session.add(checkpoint)
        session.flush()
        session.add(BrainSource(instance_id=instance_id, agent="learner", source_kind="checkpoint",
                                source_run_uid=doc["uid"], source_phase="training",
                                source_checkpoint_id=checkpoint.id, source_path=checkpoint.path))
        session.add(Claim(run_uid=doc["uid"], content_hash=document_hash(doc), owner="a" * 32,
                          host="node1", pid=1, heartbeat=now, claimed_at=now))
    with store.database.session() as session:
        saved = session.execute(select(Checkpoint)).scalar_one()
        assert (saved.best, saved.metric, saved.created.tzinfo is not None) == (True, -3.5, True)
        source = session.execute(select(BrainSource)).scalar_one()
        assert source.source_checkpoint_id == saved.id
        claim = session.execute(select(Claim)).scalar_one()
        assert claim.heartbeat == now.replace(microsecond=claim.heartbeat.microsecond)
    with pytest.raises(IntegrityError):  # one claim per run version
        with store.database.session(write=True) as session, session.begin():
            session.add(Claim(run_uid=doc["uid"], content_hash=document_hash(doc), owner="b" * 32,
                              host="node2", pid=2, heartbeat=now, claimed_at=now))
    with pytest.raises(IntegrityError):  # foreign keys are enforced (SQLite too)
        with store.database.session(write=True) as session, session.begin():
            session.add(Checkpoint(instance_id=10_000, agent="x", path="p"))


def _process_writer(url: str, root: str, document: dict[str, Any], episodes: int) -> None:
    with Store(url) as own:
        _record(own, document, Path(root), episodes=episodes, flush_rows=50)


def test_concurrent_processes_do_not_lose_rows(store_url: str, make_document: Any,
                                               tmp_path: Path) -> None:
    """What ``xrun --jobs N`` does: separate processes writing one store."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_process_writer,
                         args=(store_url, str(tmp_path), make_document(f"p{i}-0000", experiment="procs"), 800))
             for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    with Store(store_url) as store:
        assert sum(1 for _ in store.runs.episodes(experiment="procs")) == 2 * 800
        assert len(store.runs.instances(status="finished")) == 2


def test_create_false_opens_only_an_existing_store(store_url, tmp_path):
    from xdoe.errors import NoStoreError

    with pytest.raises(NoStoreError, match="no store at"):
        Store(store_url, create=False)
    assert not (tmp_path / "store").exists()  # not even the SQLite folder
    Store(store_url).close()
    with Store(store_url, create=False) as store:
        assert store.url
