"""What a run warned and went on with (schema version 3): ``warnings`` on
``run_instance``, a JSON list of lines (``RunResult.warnings``: an
observation outside its space, a non-finite reward...). Nullable: instances
recorded before, and runs that warned nothing, keep ``NULL``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("run_instance", sa.Column("warnings", sa.Text))


def downgrade() -> None:
    op.drop_column("run_instance", "warnings")
