"""How an episode ended (schema version 2): ``terminated``, ``truncated`` and
``cut_by`` on the episode and step tables (:data:`xdoe.store.schema._tables.END_COLUMNS`).
Nullable: rows written before keep ``NULL``, "not recorded".

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_TABLES = ("episode", "step")


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(table, sa.Column("terminated", sa.Boolean))
        op.add_column(table, sa.Column("truncated", sa.Boolean))
        op.add_column(table, sa.Column("cut_by", sa.String(64)))


def downgrade() -> None:
    for table in _TABLES:
        for name in ("cut_by", "truncated", "terminated"):
            op.drop_column(table, name)
