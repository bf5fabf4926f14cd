"""Rungs of pruned campaigns (schema version 5): the ``rung`` table, one row
per rung a run with ``run_config: {prune: ...}`` reached: the phase, the
rung's environment step, the run's intermediate value there, whether it was
pruned and how many other runs' values the decision saw (issue 37). Runs of
stores made before have none (pruning did not exist).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "rung",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("instance_id", _ID, sa.ForeignKey("run_instance.id", ondelete="CASCADE"), nullable=False),
        sa.Column("phase_index", sa.Integer, nullable=False),
        sa.Column("rung", sa.Integer, nullable=False),
        sa.Column("step", sa.BigInteger, nullable=False),
        sa.Column("value", sa.Float),
        sa.Column("pruned", sa.Boolean, nullable=False),
        sa.Column("peers", sa.Integer, nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),  # naive UTC (UtcDateTime)
        sa.UniqueConstraint("instance_id", "phase_index", "rung", name="uq_rung_instance_phase_rung"),
    )
    op.create_index("ix_rung_phase_rung", "rung", ["phase_index", "rung"])


def downgrade() -> None:
    op.drop_index("ix_rung_phase_rung", table_name="rung")
    op.drop_table("rung")
