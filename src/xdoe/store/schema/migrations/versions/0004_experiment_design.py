"""The design of an experiment (schema version 4): ``design`` on
``experiment``, the JSON of the design its runs come from as xgen's manifest
records it (method, every factor's coding: its low and high level, blocks),
so that readers without the output folder (the dashboard, ``-e UID`` on a
store) code and sign effects as the design does. Nullable: experiments
recorded before, and runs started without a manifest, keep ``NULL``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("experiment", sa.Column("design", sa.Text))


def downgrade() -> None:
    op.drop_column("experiment", "design")
