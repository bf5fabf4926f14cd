"""The store's schema as Alembic revisions (issue 23): ``versions/0001_*.py``
is the schema of the first release (version 1), each later revision one
change; the head is :data:`xdoe.store.schema._tables.SCHEMA_REVISION` and equals the
tables of :mod:`xdoe.store.schema._tables` (a test compares them with Alembic's
``compare_metadata``).

Revision ids are the schema version in four digits (``"0002"``), so a store's
version can be read and compared without Alembic, which is an optional extra
(``pip install 'xdoe[migrate]'``): a new store is created at head by
``create_all`` and one ``alembic_version`` row (:mod:`xdoe.store.schema._schema`),
only upgrading an older store runs these revisions. No ``alembic.ini`` is
needed: :func:`config` builds the configuration in code.

How to add a revision: ``docs/store.md``, "Schema migrations".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import Connection

__all__ = ["FOLDER", "config", "script_directory", "upgrade"]

#: The script folder (``env.py``, ``script.py.mako``, ``versions/``).
FOLDER = Path(__file__).resolve().parent


def config(connection: "Connection | None" = None, **attributes: Any) -> "Config":
    """An Alembic configuration for the store's revisions, made in code;
    ``connection`` (optional) is the connection ``env.py`` migrates, inside
    its caller's transaction.

    Raises:
        ModuleNotFoundError: Alembic is not installed (the ``migrate`` extra).
    """
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(FOLDER))
    if connection is not None:
        cfg.attributes["connection"] = connection
    cfg.attributes.update(attributes)
    return cfg


def script_directory() -> "ScriptDirectory":
    """The revisions (Alembic's :class:`~alembic.script.ScriptDirectory`)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(config())


def upgrade(connection: "Connection", version: int) -> None:
    """Upgrade the store on ``connection`` from schema ``version`` to head,
    inside the caller's transaction (nothing is committed here): the version
    is stamped first (a store made before Alembic has no ``alembic_version``
    row, only ``store_meta.schema_version``), then every later revision runs
    in order.

    Raises:
        ModuleNotFoundError: Alembic is not installed (the ``migrate`` extra).
        sqlalchemy.exc.SQLAlchemyError: a revision failed (the caller's
            transaction is rolled back: the store keeps its version).
    """
    from alembic import command

    from xdoe.store.schema._tables import revision_of

    cfg = config(connection)
    command.stamp(cfg, revision_of(version))
    command.upgrade(cfg, "head")
