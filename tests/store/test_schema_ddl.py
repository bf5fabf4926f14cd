"""The schema is the same whether it comes from the Core tables
(:mod:`xdoe.store.schema._tables`, the run path) or the ORM models mapped onto them
(:mod:`xdoe.store.schema._models`): the ``CREATE TABLE``/``CREATE INDEX`` text of
every table, for SQLite and PostgreSQL, equals the one the declarative models
produced before the split (``data/schema_ddl.sql``); and the run path opens,
claims and records without importing ``sqlalchemy.orm``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

import xdoe.store.sessions._sessions  # noqa: F401 - the session tables join the same metadata
from xdoe.store.schema import _tables
from xdoe.store.schema._models import Base, Checkpoint, Run, RunInstance

GOLDEN = Path(__file__).with_name("data") / "schema_ddl.sql"


def _ddl() -> str:
    out = []
    for name, dialect in (("sqlite", sqlite.dialect()), ("postgresql", postgresql.dialect())):
        out.append(f"-- {name}")
        for table in _tables.METADATA.sorted_tables:
            out.append(str(CreateTable(table).compile(dialect=dialect)).strip() + ";")
            for index in sorted(table.indexes, key=lambda i: str(i.name)):
                out.append(str(CreateIndex(index).compile(dialect=dialect)).strip() + ";")
    return "\n".join(out) + "\n"


def test_ddl_of_both_dialects_is_unchanged() -> None:
    assert _ddl() == GOLDEN.read_text()


def test_the_orm_models_are_mapped_onto_the_core_tables() -> None:
    assert Base.metadata is _tables.METADATA
    assert Run.__table__ is _tables.run
    assert RunInstance.__table__ is _tables.run_instance
    assert Checkpoint.__table__ is _tables.checkpoint
    assert {t.name for t in _tables.METADATA.sorted_tables} >= {
        "store_meta", "experiment", "run", "run_instance", "phase", "episode", "step", "checkpoint",
        "brain_source", "claim", "stop_request", "session_tree", "session_node", "session_edge"}


RUN_PATH = """
import sys
from pathlib import Path
from xdoe.store import Store
url = sys.argv[1]
doc = {"uid": "r1", "experiment_uid": "e", "seed": 1,
       "design_point": {"index": 0, "repetition": 0, "levels": {"a": 1}}}
with Store(url) as store:
    assert store.runs.claim_run("r1", "h", owner="me", stale_after=60)
    assert not store.runs.run_finished("r1", "h")
    with store.recorder(doc, results_root=Path(sys.argv[2])) as rec:
        rec.phase_started(0, "train", "train", {"worker": 1})
        rec.episode_finished(0, 0, "a", 3, 1.0, 1.0, 0.1)
        assert store.runs.stop_requested(rec.instance_id) is None
        rec.phase_finished()
    assert store.runs.finished_instance("r1") == rec.instance_id
    assert store.runs.release_claim("r1", "h", owner="me")
print("orm" if "sqlalchemy.orm" in sys.modules else "core")
"""


def test_the_run_path_does_not_import_the_orm(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", RUN_PATH, f"sqlite:///{tmp_path / 's.sqlite'}", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["core"]
