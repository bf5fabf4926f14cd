"""A store made before schema version 2 (no ``terminated``/``truncated``/
``cut_by`` on episode and step rows): reads leave it untouched and see the
new columns as unknown; the first write upgrades it, keeping every row.

The old store is built from the exact SQLite DDL of schema version 1
(``data/schema_v1_sqlite.sql``, what the DDL test pinned before version 2)
with rows inserted as version 1 wrote them."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest

from xdoe.store import SCHEMA_VERSION, Store

V1_DDL = Path(__file__).with_name("data") / "schema_v1_sqlite.sql"
NEW = ("terminated", "truncated", "cut_by")


def _old_store(path: Path) -> str:
    now = dt.datetime(2026, 1, 1, 12, 0, 0).isoformat(sep=" ")
    con = sqlite3.connect(path)
    con.executescript(V1_DDL.read_text())
    con.execute("INSERT INTO store_meta VALUES ('schema_version', '1')")
    con.execute("INSERT INTO experiment VALUES (1, 'old-study', ?)", (now,))
    doc = {"uid": "old-0000", "experiment_uid": "old-study", "seed": 5,
           "design_point": {"index": 0, "repetition": 0, "levels": {"alpha": 0.5}}}
    con.execute("INSERT INTO run VALUES (1, 'old-0000', 1, 'h', ?, 0, 0, 5, ?, NULL, ?)",
                (json.dumps(doc), json.dumps({"alpha": 0.5}), now))
    con.execute("INSERT INTO run_instance VALUES (1, 'u-1', 1, 'host', 1, ?, ?, 'finished', NULL, NULL, NULL, NULL)",
                (now, now))
    con.execute("INSERT INTO phase VALUES (1, 1, 0, 'training', 'train', NULL, 'finished', ?, ?)", (now, now))
    for e in range(3):
        con.execute("INSERT INTO episode (phase_id, worker, episode, agent, steps, reward, objective, wall_time, extras)"
                    " VALUES (1, 0, ?, 'learner', 10, ?, ?, 0.5, NULL)", (e, float(e), float(e)))
    con.execute("INSERT INTO step (phase_id, worker, episode, step, agent, sensors, actions, rewards, objective, done)"
                " VALUES (1, 0, 0, 9, 'learner', '{}', '{}', '{}', 1.0, 1)")
    con.commit()
    con.close()
    return f"sqlite:///{path}"


def _columns(path: Path, table: str) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [row[1] for row in con.execute(f"PRAGMA table_info({table})")]
    finally:
        con.close()


def _version(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        con.close()


def test_reading_an_old_store_leaves_it_as_it_is_and_sees_unknown_ends(tmp_path: Path) -> None:
    import xdoe.results

    path = tmp_path / "old.sqlite"
    url = _old_store(path)
    with Store(url, create=False) as store:
        assert store.schema_version == 1 and not store.has_end_columns
        frame = xdoe.results.load(store)
        result = store.export_episodes(tmp_path / "t.csv")
    assert list(frame["reward"]) == [0.0, 1.0, 2.0]
    assert frame[list(NEW)].isna().all().all()  # unknown, not false
    assert result.rows == 3 and list(result.columns[-3:]) == list(NEW)
    assert (tmp_path / "t.csv").read_text().splitlines()[1].endswith(",,,")
    # nothing was written: same columns, same version
    assert not set(NEW) & set(_columns(path, "episode")) and _version(path) == "1"


def test_the_first_write_upgrades_the_store_and_keeps_every_row(tmp_path: Path) -> None:
    import xdoe.results

    path = tmp_path / "old.sqlite"
    url = _old_store(path)
    with Store(url) as store:  # opened for writing: upgraded
        assert store.schema_version == SCHEMA_VERSION == 2 and store.has_end_columns
        before = list(xdoe.results.load(store)[["run", "episode", "steps", "reward", "objective"]]
                      .itertuples(index=False))
        doc = {"uid": "new-0000", "experiment_uid": "old-study", "seed": 6,
               "design_point": {"index": 0, "repetition": 1, "levels": {"alpha": 0.5}}}
        with store.recorder(doc, results_root=tmp_path / "results") as rec:
            rec.phase_started(0, "training", "train", {"worker": 1})
            rec.episode_finished(0, 0, "learner", 7, 1.0, 1.0, 0.1, None, False, True, "step_budget")
            rec.phase_finished()
    for table in ("episode", "step"):
        assert _columns(path, table)[-3:] == list(NEW)
    assert _version(path) == "2"
    with Store(url, create=False) as store:
        frame = xdoe.results.load(store)
    old = frame[frame["run"] == "old-0000"]
    assert list(old[["run", "episode", "steps", "reward", "objective"]].itertuples(index=False)) == before
    assert old[list(NEW)].isna().all().all()  # old rows: not recorded
    new = frame[frame["run"] == "new-0000"].iloc[0]
    assert (new["terminated"], new["truncated"], new["cut_by"]) == (False, True, "step_budget")
    con = sqlite3.connect(path)
    assert con.execute("SELECT done, terminated, truncated, cut_by FROM step").fetchall() == [(1, None, None, None)]
    con.close()
    with Store(url) as store:  # a second writer finds it complete: nothing to do
        assert store.schema_version == 2


def test_a_newer_store_is_still_refused(tmp_path: Path) -> None:
    from xdoe.errors import StoreError

    path = tmp_path / "old.sqlite"
    url = _old_store(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE store_meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    for create in (True, False):
        with pytest.raises(StoreError, match="newer"):
            Store(url, create=create)


def test_upgrade_on_every_backend(store_url: str, tmp_path: Path) -> None:
    # a version-2 store taken back to version 1 (its columns dropped), with rows
    from sqlalchemy import inspect, text

    import xdoe.results
    from xdoe.store import Store

    with Store(store_url) as store:
        doc = {"uid": "b-0000", "experiment_uid": "b", "seed": 1,
               "design_point": {"index": 0, "repetition": 0, "levels": {"alpha": 0.5}}}
        with store.recorder(doc, results_root=tmp_path / "r") as rec:
            rec.phase_started(0, "training", "train", {"worker": 1})
            for e in range(2):
                rec.episode_finished(0, e, "learner", 5, float(e), float(e), 0.1)
            rec.phase_finished()
        with store.engine.begin() as conn:
            for table in ("episode", "step"):
                for name in NEW:
                    conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {name}"))
            conn.execute(text("UPDATE store_meta SET value = '1' WHERE key = 'schema_version'"))
    with Store(store_url, create=False) as store:
        assert store.schema_version == 1
        frame = xdoe.results.load(store)
        assert list(frame["reward"]) == [0.0, 1.0] and frame[list(NEW)].isna().all().all()
        assert not set(NEW) & {c["name"] for c in inspect(store.engine).get_columns("episode")}
    with Store(store_url) as store:
        assert store.schema_version == 2
        for table in ("episode", "step"):
            assert set(NEW) <= {c["name"] for c in inspect(store.engine).get_columns(table)}
        frame = xdoe.results.load(store)
        assert list(frame["reward"]) == [0.0, 1.0] and frame[list(NEW)].isna().all().all()
