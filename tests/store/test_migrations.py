"""The store's Alembic revisions (:mod:`xdoe.store.schema.migrations`): one linear
chain ``0001 -> ... -> head`` whose ids are the schema versions; revision 1 is
the first release's schema, exactly; the chain run from an empty database
gives the tables of :mod:`xdoe.store.schema._tables` on SQLite and PostgreSQL (so a
table change without a revision fails here, with the operations it lacks);
the ``alembic_version`` table a new store gets is Alembic's own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata, produce_migrations, render_python_code
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect
from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateTable

import xdoe.store.sessions._sessions  # noqa: F401 - the session tables join the metadata
from xdoe.store.schema import migrations
from xdoe.store.schema._tables import METADATA, SCHEMA_REVISION, SCHEMA_VERSION, alembic_version, revision_of

V1_SQLITE = Path(__file__).with_name("data") / "schema_v1_sqlite.sql"


def _engine(url: str):  # noqa: ANN202 - a plain engine: nothing of xdoe's store code touches it
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        Path(str(engine.url.database)).parent.mkdir(parents=True, exist_ok=True)
    return engine


def test_the_chain_is_linear_and_its_ids_are_the_schema_versions() -> None:
    script = migrations.script_directory()
    assert script.get_heads() == [SCHEMA_REVISION]
    chain = [rev.revision for rev in script.walk_revisions("base", "heads")][::-1]
    assert chain == [revision_of(v) for v in range(1, SCHEMA_VERSION + 1)]
    for rev in script.walk_revisions():
        assert rev.down_revision == (revision_of(int(rev.revision) - 1) if rev.revision != "0001" else None)
        assert Path(rev.path).name.startswith(rev.revision + "_")


def test_revision_1_is_the_first_release_schema_exactly(tmp_path: Path) -> None:
    engine = _engine(f"sqlite:///{tmp_path / 'v1.sqlite'}")
    with engine.begin() as conn:
        command.upgrade(migrations.config(conn), "0001")
    with engine.connect() as conn:
        made = dict(conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").all())
    engine.dispose()
    pinned = [s.strip() for s in V1_SQLITE.read_text().split(";") if s.strip()]
    names = [re.match(r"CREATE (?:TABLE|INDEX) (\S+)", s).group(1) for s in pinned]
    assert set(made) == set(names) | {"alembic_version"}
    for name, statement in zip(names, pinned, strict=True):
        assert made[name].strip() == statement, name


def test_the_chain_gives_the_tables_of_the_code_and_goes_back(store_url: str) -> None:
    engine = _engine(store_url)
    try:
        with engine.begin() as conn:
            command.upgrade(migrations.config(conn), "head")
        with engine.connect() as conn:
            context = MigrationContext.configure(conn)
            diff = compare_metadata(context, METADATA)
            # the revision a change of the tables needs, as Alembic would write it
            missing = render_python_code(produce_migrations(context, METADATA).upgrade_ops)
            assert diff == [], f"the tables differ from the head revision; add a revision with:\n{missing}"
            assert context.get_current_revision() == SCHEMA_REVISION
        with engine.begin() as conn:
            command.downgrade(migrations.config(conn), "base")
        assert inspect(engine).get_table_names() == ["alembic_version"]
    finally:
        engine.dispose()


def test_the_version_table_is_alembics_own(store_url: str) -> None:
    engine = _engine(store_url)
    try:
        with engine.begin() as conn:  # Alembic creates its table (an empty database stamped at head)
            command.stamp(migrations.config(conn), "head")
        with engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == SCHEMA_REVISION
            insp = inspect(conn)
            columns = [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns("alembic_version")]
            pk = insp.get_pk_constraint("alembic_version")
            if conn.dialect.name == "sqlite":
                ddl = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'alembic_version'").scalar()
                assert ddl.strip() == str(CreateTable(alembic_version).compile(dialect=sqlite.dialect())).strip()
    finally:
        engine.dispose()
    assert columns == [(c.name, str(c.type), c.nullable) for c in alembic_version.columns]
    assert pk["constrained_columns"] == ["version_num"]
    if pk.get("name") is not None:  # PostgreSQL reports it; SQLite does not name it back
        assert pk["name"] == alembic_version.primary_key.name == "alembic_version_pkc"


@pytest.mark.parametrize("name", ["env.py", "script.py.mako"])
def test_the_script_folder_has_what_alembic_needs(name: str) -> None:
    assert (migrations.FOLDER / name).is_file()
