"""Writers that meet on one SQLite file (``xrun --jobs N``): the per-episode
commit waits for the other writer's lock in short sleeps
(``xdoe.store.schema._engine.while_busy``), never fails for it, and gives the
store's busy timeout back to the pool's connection."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from xdoe.store import Store
from xdoe.store.schema import _engine
from xdoe.store.schema._engine import SQLITE_BUSY_TIMEOUT_MS, while_busy
from tests.store.conftest import run_document


def _wal_file(tmp_path: Path) -> Path:
    path = tmp_path / "x.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x INTEGER)")
    return path


def _connection(path: Path) -> sqlite3.Connection:
    # busy timeout 0: a statement that meets the lock fails at once; used by the test's thread too
    return sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)


def test_a_statement_that_meets_the_lock_runs_once_the_lock_is_free(tmp_path: Path) -> None:
    path = _wal_file(tmp_path)
    holder, writer = _connection(path), _connection(path)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, held until its COMMIT
    attempts, met = [], threading.Event()

    def execute(sql: str, values: tuple[int]) -> Any:
        attempts.append(sql)
        try:
            return writer.execute(sql, values)
        except sqlite3.OperationalError:
            met.set()
            raise

    errors: list[BaseException] = []
    thread = threading.Thread(target=lambda: _collect(errors, while_busy, execute, "INSERT INTO t VALUES (?)", (7,)))
    thread.start()
    assert met.wait(30), errors  # it met the lock...
    holder.execute("COMMIT")  # ...which is now free
    thread.join(30)
    assert not thread.is_alive() and errors == []
    assert len(attempts) >= 2
    assert writer.execute("SELECT x FROM t").fetchall() == [(7,)]
    holder.close()
    writer.close()


def _collect(errors: list[BaseException], call: Any, *args: Any) -> None:
    try:
        call(*args)
    except BaseException as exc:  # noqa: BLE001 - handed to the test
        errors.append(exc)


def test_other_errors_are_raised_at_once(tmp_path: Path) -> None:
    conn = _connection(_wal_file(tmp_path))
    attempts = []

    def execute(sql: str) -> Any:
        attempts.append(sql)
        return conn.execute(sql)

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        while_busy(execute, "INSERT INTO missing VALUES (1)")
    assert len(attempts) == 1
    conn.close()


def test_it_gives_up_after_the_busy_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _wal_file(tmp_path)
    holder, writer = _connection(path), _connection(path)
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(_engine, "SQLITE_BUSY_TIMEOUT_MS", 30)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        while_busy(writer.execute, "INSERT INTO t VALUES (1)")
    holder.execute("ROLLBACK")
    holder.close()
    writer.close()


@pytest.mark.parametrize("store_steps", ["none", "all"])
def test_a_recorder_waits_for_another_writer_and_gives_the_timeout_back(tmp_path: Path, store_steps: str) -> None:
    """An episode ends while another connection holds the write lock: the
    flush waits (it neither fails nor loses the episode) and writes once the
    lock is free; at the run's end the pool's connection has the store's
    busy timeout again."""
    path = tmp_path / "store.sqlite"
    store = Store(f"sqlite:///{path}")
    rec = store.recorder(run_document(), results_root=tmp_path / "results", store_steps=store_steps)
    rec.start()
    rec.phase_started(0, "training", "train", {"mode": "train", "worker": 1, "episodes": 2})

    def episode(number: int) -> None:
        rec.step(0, number, 0, "learner", {"taxi.observation": 1}, {"taxi.action": 1}, {"taxi.reward": -1.0},
                 -1.0, True)
        rec.episode_finished(0, number, "learner", 1, reward=-1.0, objective=-1.0, wall_time=0.1)
        rec.flush()

    episode(0)  # the insert statements compiled, the driver connection taken
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    errors: list[BaseException] = []
    thread = threading.Thread(target=lambda: _collect(errors, episode, 1))
    thread.start()
    thread.join(0.3)
    assert thread.is_alive()  # waiting for the lock, not failed
    holder.execute("COMMIT")
    thread.join(30)
    assert not thread.is_alive() and errors == []
    rec.phase_finished()
    rec.finish("finished")
    holder.close()
    assert sorted(e["episode"] for e in store.runs.episodes()) == [0, 1]
    with store.database.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == SQLITE_BUSY_TIMEOUT_MS
    store.close()
