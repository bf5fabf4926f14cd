"""A store made by the previous release (schema version 1, before Alembic:
only ``store_meta.schema_version = 1``; no ``terminated``/``truncated``/
``cut_by`` on episode and step rows): reads leave it untouched and see the
new columns as unknown; the first write upgrades it with Alembic's revisions,
keeping every row, on SQLite and PostgreSQL; a newer store is refused; without
Alembic the upgrade names the extra and a new store is still created.

The old store is built from the exact DDL of schema version 1 of each
dialect (``data/schema_v1_*.sql``, what the DDL test pinned before version
2), through a plain engine, with rows inserted as version 1 wrote them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text

from xdoe.store import SCHEMA_VERSION, Store
from xdoe.store.schema._tables import SCHEMA_REVISION
from xdoe._extras import install_command

DATA = Path(__file__).with_name("data")
NEW = ("terminated", "truncated", "cut_by")


def _old_columns(rows: list, old: list) -> list:
    """``rows`` cut to the columns of ``old`` (an upgrade appends nullable columns, e.g. experiment.design)."""
    width = len(old[0]) if old else 0
    assert all(all(v is None for v in r[width:]) for r in rows)  # added columns: NULL on old rows
    return [tuple(r[:width]) for r in rows]
#: every column added since version 1 (left out of the row dumps compared before and after)
ADDED = (*NEW, "warnings")
NOW = "2026-01-01 12:00:00"
#: table -> the first columns of its rows (ids come from the database, as version 1 let them)
ROWS = {
    "experiment": ("uid, created", ["('old-study', :now)"]),
    "run": ("uid, experiment_id, content_hash, document, design_point, repetition, seed, levels, file_sha256, created",
            ["('old-0000', 1, 'h', :doc, 0, 0, 5, :levels, NULL, :now)"]),
    "run_instance": ('uuid, run_id, host, pid, start, "end", status, error, traceback, heartbeat, results_dir',
                     ["('u-1', 1, 'host', 1, :now, :now, 'finished', NULL, NULL, NULL, NULL)"]),
    "phase": ('instance_id, "index", name, mode, config, status, start, "end"',
              ["(1, 0, 'training', 'train', NULL, 'finished', :now, :now)"]),
    "episode": ("phase_id, worker, episode, agent, steps, reward, objective, wall_time, extras",
                [f"(1, 0, {e}, 'learner', 10, {e}.0, {e}.0, 0.5, NULL)" for e in range(3)]),
    "step": ("phase_id, worker, episode, step, agent, sensors, actions, rewards, objective, done",
             ["(1, 0, 0, 9, 'learner', '{}', '{}', '{}', 1.0, :yes)"]),
    "checkpoint": ("instance_id, phase_id, agent, step, episode, path, sha256, metric, best, created",
                   ["(1, 1, 'learner', 30, 2, 'c.brain', 'ab', 2.0, :yes, :now)"]),
}


def _old_store(url: str, *, sessions: bool = True) -> str:
    """Build a version-1 store at ``url`` from the exact DDL, with rows;
    without the session tables when ``sessions`` is false (they were made on
    first use, so most stores of version 1 lack them)."""
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        Path(str(engine.url.database)).parent.mkdir(parents=True, exist_ok=True)
    ddl = (DATA / f"schema_v1_{engine.dialect.name}.sql").read_text()
    doc = {"uid": "old-0000", "experiment_uid": "old-study", "seed": 5,
           "design_point": {"index": 0, "repetition": 0, "levels": {"alpha": 0.5}}}
    params = {"now": NOW, "doc": json.dumps(doc), "levels": json.dumps({"alpha": 0.5}), "yes": True}
    try:
        with engine.begin() as conn:
            for statement in filter(str.strip, ddl.split(";")):
                if sessions or " session_" not in statement:
                    conn.exec_driver_sql(statement)
            _fill(conn, 1, params)
    finally:
        engine.dispose()
    return url


def _fill(conn: Any, version: int, params: dict[str, Any]) -> None:
    """Stamp ``version`` in ``store_meta`` and insert :data:`ROWS`."""
    conn.execute(text(f"INSERT INTO store_meta VALUES ('schema_version', '{version}')"))
    for table, (columns, values) in ROWS.items():
        for row in values:
            conn.execute(text(f"INSERT INTO {table} ({columns}) VALUES {row}"), params)


def _dump(url: str) -> dict[str, list[tuple]]:
    """Every row of every version-1 table, without the columns added since."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            out = {}
            for table in inspect(conn).get_table_names():
                names = [c["name"] for c in inspect(conn).get_columns(table) if c["name"] not in ADDED]
                if table == "alembic_version":
                    continue
                quoted = ", ".join(f'"{n}"' for n in names)
                out[table] = [tuple(r) for r in conn.execute(text(f'SELECT {quoted} FROM "{table}" ORDER BY 1'))]
            return out
    finally:
        engine.dispose()


def _versions(url: str) -> tuple[str | None, list[str]]:
    """(``store_meta.schema_version``, the ``alembic_version`` rows)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            meta = conn.execute(text("SELECT value FROM store_meta WHERE key = 'schema_version'")).scalar()
            if not inspect(conn).has_table("alembic_version"):
                return meta, []
            return meta, list(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
    finally:
        engine.dispose()


def _columns(url: str, table: str) -> list[str]:
    engine = create_engine(url)
    try:
        return [c["name"] for c in inspect(engine).get_columns(table)]
    finally:
        engine.dispose()


def test_reading_an_old_store_leaves_it_as_it_is_and_sees_unknown_ends(store_url: str, tmp_path: Path) -> None:
    import xdoe.results

    url = _old_store(store_url)
    before = _dump(url)
    with Store(url, create=False) as store:
        assert store.schema_version == 1 and not store.has_end_columns
        frame = xdoe.results.load(store)
        result = store.views.export_episodes(tmp_path / "t.csv")
    assert list(frame["reward"]) == [0.0, 1.0, 2.0]
    assert frame[list(NEW)].isna().all().all()  # unknown, not false
    assert result.rows == 3 and list(result.columns[-3:]) == list(NEW)
    assert (tmp_path / "t.csv").read_text().splitlines()[1].endswith(",,,")
    # nothing was written: same rows, same columns, same version, no version table
    assert _dump(url) == before and not set(NEW) & set(_columns(url, "episode"))
    assert _versions(url) == ("1", [])


def test_the_first_write_upgrades_the_store_and_keeps_every_row(store_url: str, tmp_path: Path) -> None:
    import xdoe.results
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    import xdoe.store.sessions._sessions  # noqa: F401 - the session tables join the metadata (version 1 had them)
    from xdoe.store.schema._tables import METADATA

    url = _old_store(store_url)
    before = _dump(url)
    with Store(url) as store:  # opened for writing: upgraded
        assert store.schema_version == SCHEMA_VERSION == 5 and store.has_end_columns
        doc = {"uid": "new-0000", "experiment_uid": "old-study", "seed": 6,
               "design_point": {"index": 0, "repetition": 1, "levels": {"alpha": 0.5}}}
        with store.recorder(doc, results_root=tmp_path / "results") as rec:
            rec.phase_started(0, "training", "train", {"worker": 1})
            rec.episode_finished(0, 0, "learner", 7, 1.0, 1.0, 0.1, None, False, True, "step_budget")
            rec.phase_finished()
        with store.database.engine.connect() as conn:  # the upgraded schema is the head's, exactly
            assert compare_metadata(MigrationContext.configure(conn), METADATA) == []
            assert MigrationContext.configure(conn).get_current_revision() == SCHEMA_REVISION
    for table in ("episode", "step"):
        assert _columns(url, table)[-3:] == list(NEW)
    assert _versions(url) == (str(SCHEMA_VERSION), [SCHEMA_REVISION])  # both places: older releases read store_meta
    after = _dump(url)
    for table, rows in before.items():  # every old row is still there, unchanged
        if table != "store_meta":  # its version: above
            assert _old_columns(after[table][:len(rows)], rows) == rows, table
    with Store(url, create=False) as store:
        frame = xdoe.results.load(store)
    old = frame[frame["run"] == "old-0000"]
    assert list(old["reward"]) == [0.0, 1.0, 2.0] and old[list(NEW)].isna().all().all()  # old rows: not recorded
    new = frame[frame["run"] == "new-0000"].iloc[0]
    assert (new["terminated"], new["truncated"], new["cut_by"]) == (False, True, "step_budget")
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT done, terminated, truncated, cut_by FROM step")).all() == [
            (True, None, None, None)]
    engine.dispose()
    with Store(url) as store:  # a second writer finds it complete: nothing to do
        assert store.schema_version == SCHEMA_VERSION


def test_a_store_without_session_tables_is_upgraded_and_gets_them_on_first_use(tmp_path: Path) -> None:
    url = _old_store(f"sqlite:///{tmp_path / 'old.sqlite'}", sessions=False)
    before = _dump(url)
    assert not any(table.startswith("session_") for table in before)
    with Store(url) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.sessions.get_or_create_tree("t", "grow").uid == "t"
    assert _versions(url) == (str(SCHEMA_VERSION), [SCHEMA_REVISION])
    assert _columns(url, "step")[-3:] == list(NEW) and "session_edge" in _dump(url)


@pytest.mark.parametrize("recorded", ["alembic_version", "store_meta"])
def test_a_newer_store_is_refused_naming_both_revisions(tmp_path: Path, recorded: str) -> None:
    from xdoe.errors import StoreError

    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    Store(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:
        if recorded == "alembic_version":  # a later xdoe with a revision 0099
            conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
        else:  # what a later xdoe also writes, and releases before Alembic read
            conn.execute(text("UPDATE store_meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    for create in (True, False):
        with pytest.raises(StoreError, match=f"schema revision 0099, newer than this xdoe's {SCHEMA_REVISION}; "
                                             r"upgrade xdoe \(pip install --upgrade xdoe\)"):
            Store(url, create=create)
    proc = _xrun(tmp_path, [], "experiment-start", str(_run_file(tmp_path)), "--store", url, "--quiet")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and f"newer than this xdoe's {SCHEMA_REVISION}; upgrade xdoe" in proc.stderr


def test_an_unreadable_revision_is_refused(tmp_path: Path) -> None:
    from xdoe.errors import StoreError

    url = f"sqlite:///{tmp_path / 'other.sqlite'}"
    Store(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:  # e.g. another application's Alembic history in the same database
        conn.execute(text("UPDATE alembic_version SET version_num = 'ae1027a6acf'"))
    engine.dispose()
    with pytest.raises(StoreError, match="unreadable schema revision 'ae1027a6acf'"):
        Store(url)


#: run xrun (or Python code) with the ``migrate`` extra's modules unimportable, as in a core install
_BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('alembic', 'mako'):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
"""


def _xrun(cwd: Path, blocked: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    code = (_BLOCK if blocked else "") + f"from xdoe.cli._xrun import main\nmain({list(args)!r})\n"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)


RUN = """\
uid: r-0
seed: 3
schedule:
  - training:
      environments: [{environment: {name: xdoe.environments:DummyEnvironment, uid: d,
                      params: {length: 3, sensors: 1, actuators: 1, discrete: true}}}]
      agents: [{name: rnd, brain: {name: xdoe.agents:DummyBrain}, muscle: {name: xdoe.agents:DummyMuscle},
                objective: {name: xdoe.agents:RewardObjective}}]
      simulation: {name: xdoe.simulation:VanillaSimController}
      phase_config: {mode: train, episodes: 2}
"""


def _run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(RUN)
    return path


def test_upgrading_without_alembic_names_the_extra_and_changes_nothing(tmp_path: Path) -> None:
    url = _old_store(f"sqlite:///{tmp_path / 'old.sqlite'}")
    before = _dump(url)
    proc = _xrun(tmp_path, ["alembic"], "experiment-start", str(_run_file(tmp_path)), "--store", url, "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: store ") and f"has schema revision 0001, older than this xdoe's {SCHEMA_REVISION}" \
        in proc.stderr and install_command("migrate") in proc.stderr
    assert _dump(url) == before and _versions(url) == ("1", [])  # rolled back: the store is as it was


def test_a_new_store_is_created_at_head_without_alembic(tmp_path: Path) -> None:
    from alembic.runtime.migration import MigrationContext

    url = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    proc = _xrun(tmp_path, ["alembic"], "experiment-start", str(_run_file(tmp_path)), "--store", url, "--quiet")
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run([sys.executable, "-c", "import sys; from xdoe.store import Store; "
                            f"Store({url!r}).close(); print('alembic' in sys.modules)"],
                           capture_output=True, text=True, timeout=120)
    assert check.stdout.split() == ["False"], check.stderr  # opening, like creating, never imports Alembic
    assert _versions(url) == (str(SCHEMA_VERSION), [SCHEMA_REVISION])
    engine = create_engine(url)
    with engine.connect() as conn:  # Alembic sees the store at head, as after `alembic stamp head`
        assert MigrationContext.configure(conn).get_current_revision() == SCHEMA_REVISION
    engine.dispose()


def _version_2_store(url: str) -> str:
    """A store at revision 0002 (what the release before run warnings
    wrote: the chain up to 0002, both version records), with a finished run."""
    from alembic import command

    from xdoe.store.schema import migrations

    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        Path(str(engine.url.database)).parent.mkdir(parents=True, exist_ok=True)
    params = {"now": NOW, "doc": json.dumps({"uid": "old-0000"}), "levels": json.dumps({"alpha": 0.5}), "yes": True}
    try:
        with engine.begin() as conn:
            command.upgrade(migrations.config(conn), "0002")
        with engine.begin() as conn:
            _fill(conn, 2, params)
    finally:
        engine.dispose()
    return url


def test_a_version_2_store_is_read_as_it_is_and_upgraded_to_head_on_first_write(store_url: str, tmp_path: Path) -> None:
    from sqlalchemy import select

    from xdoe.store.schema._tables import run_instance

    url = _version_2_store(store_url)
    before = _dump(url)
    assert "warnings" not in _columns(url, "run_instance")
    with Store(url, create=False) as store:  # `xrun status` reads it: no warnings column, none shown
        assert store.schema_version == 2
        status = store.views.campaign_status()
        assert [(r.run, r.status, r.warnings) for r in status.runs] == [("old-0000", "finished", ())]
    assert _dump(url) == before and _versions(url) == ("2", ["0002"])
    with Store(url) as store:  # opened for writing: upgraded
        assert store.schema_version == SCHEMA_VERSION == 5
        with store.recorder({"uid": "new-0000", "experiment_uid": "old-study", "seed": 1},
                            results_root=tmp_path / "results") as rec:
            rec.phase_started(0, "training", "train", {"worker": 1})
            rec.phase_finished()
            rec.finish("finished", warnings=["something odd"])
        status = store.views.campaign_status()
    assert {r.run: r.warnings for r in status.runs} == {"old-0000": (), "new-0000": ("something odd",)}
    assert _columns(url, "run_instance")[-1] == "warnings"
    assert _versions(url) == (str(SCHEMA_VERSION), [SCHEMA_REVISION])
    after = _dump(url)
    for table, rows in before.items():
        if table != "store_meta":
            assert _old_columns(after[table][:len(rows)], rows) == rows, table
    engine = create_engine(url)
    with engine.connect() as conn:  # the old instance: NULL, not recorded
        rows = conn.execute(select(run_instance.c.id, run_instance.c.warnings).order_by(run_instance.c.id)).all()
    engine.dispose()
    assert rows == [(1, None), (2, ["something odd"])]
