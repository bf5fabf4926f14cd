"""Alembic's environment for the store's revisions, run by ``alembic.command``
with a configuration from :func:`xdoe.store.schema.migrations.config`: it migrates
(or, for ``command.revision(..., autogenerate=True)``, compares with
:data:`xdoe.store.schema._tables.METADATA`) the connection given in
``config.attributes["connection"]``, inside its caller's transaction.
Imported outside an Alembic command it does nothing."""

from __future__ import annotations

from alembic import context

from xdoe.store.schema._tables import METADATA


def run_migrations() -> None:
    """Run the command's migrations on the configured connection.

    Raises:
        SystemExit: no connection was given (xdoe's revisions run online only).
    """
    connection = context.config.attributes.get("connection")
    if connection is None or context.is_offline_mode():
        raise SystemExit("xdoe's migrations run on a connection: "
                         "alembic.command.<name>(xdoe.store.schema.migrations.config(connection), ...)")
    context.configure(connection=connection, target_metadata=METADATA)
    with context.begin_transaction():  # a no-op inside the caller's transaction
        context.run_migrations()


try:
    context.config  # noqa: B018 - set only while an Alembic command runs this file
except AttributeError:
    pass
else:
    run_migrations()
