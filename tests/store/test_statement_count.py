"""The statements the run path sends to a new SQLite store (issue 35):
opening it, starting a run and recording one checkpoint. A redundant
statement added back (an update of a value the insert already set, a read
of a table just created, a flag set to what it is) changes these counts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event

from xdoe.store import Store
from tests.store.conftest import run_document


@contextmanager
def counted(store: Store) -> Iterator[list[str]]:
    """The SQL text of every statement sent on the store's engine meanwhile."""
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(" ".join(statement.split()))

    event.listen(store.database.engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(store.database.engine, "before_cursor_execute", record)


def test_run_start_and_one_checkpoint_send_the_known_statements(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.sqlite'}")
    try:
        recorder = store.recorder(run_document(), results_root=tmp_path / "results", file_sha256="ab" * 32)
        with counted(store) as start:
            instance = recorder.start()
        recorder.phase_started(0, "training", "train", {})
        with counted(store) as checkpoint:
            info, doomed = store.checkpoints.record_checkpoint(
                instance, agent="learner", phase_id=recorder.phase_id, step=1, episode=0,
                path=tmp_path / "ck.pt", sha256="cd" * 32, metric=1.0, keep=2)
        recorder.finish("finished")
    finally:
        store.close()
    # the run's row is inserted with its file hash, not updated after
    assert not [s for s in start if s.startswith("UPDATE run ")], start
    # BEGIN, experiment (read, savepoint, insert, release), run (the same), run_instance
    assert len(start) == 10, start
    # BEGIN, read its group and the rows of its path, insert (its best flag decided), read back
    assert len(checkpoint) == 4, checkpoint
    assert not [s for s in checkpoint if s.startswith("UPDATE")], checkpoint
    assert info.best and doomed == []


def test_a_new_store_records_its_version_without_reading_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(" ".join(statement.split()))

    from sqlalchemy.engine import Engine

    event.listen(Engine, "before_cursor_execute", record)
    try:
        store = Store(url)
        store.close()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    version_reads = [s for s in sent if s.startswith("SELECT") and ("store_meta" in s or "alembic_version" in s)]
    assert version_reads == [], version_reads
    assert len([s for s in sent if s.startswith("INSERT")]) == 2, sent
    reopened = Store(url)  # what was written reads back as the head version
    reopened.close()


def test_a_run_recorded_without_its_file_hash_gets_it_from_a_later_start(tmp_path: Path, store: Store) -> None:
    """The update kept for runs found, not inserted: a first start without the
    hash, a second with it, a third with another hash (the first one stays)."""
    for file_hash in (None, "ab" * 32, "cd" * 32):
        recorder = store.recorder(run_document(), results_root=tmp_path / "results", file_sha256=file_hash)
        recorder.start()
        recorder.finish("finished")
    found = store.runs.finished_file_hashes(["ab" * 32, "cd" * 32])
    assert list(found) == ["ab" * 32]
    assert found["ab" * 32][0] == "taxi-study-0003"
