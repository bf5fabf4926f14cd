"""The schema of the first release (schema version 1): every table as it was
then, frozen here (a revision never imports the live tables). Stores made
before Alembic record ``store_meta.schema_version = 1`` and are stamped with
this revision before they are upgraded; a new store is never built from it
(``create_all`` makes the head at once), only the test that checks the chain
against the tables runs it.

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# 64-bit ids on servers; SQLite needs exactly INTEGER for an autoincrementing rowid.
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_NOW = sa.DateTime()  # naive UTC (xdoe.store.schema._tables.UtcDateTime)


def _id() -> sa.Column:
    return sa.Column("id", _ID, primary_key=True, autoincrement=True)


def _ref(name: str, target: str, ondelete: str, nullable: bool, **kw: object) -> sa.Column:
    return sa.Column(name, _ID, sa.ForeignKey(target, ondelete=ondelete), nullable=nullable, **kw)


def _indexes(table: str, *indexes: tuple[str, list[str]]) -> None:
    for name, columns in indexes:
        op.create_index(name, table, columns)


def upgrade() -> None:
    op.create_table("claim", _id(),
                    sa.Column("run_uid", sa.String(255), nullable=False),
                    sa.Column("content_hash", sa.String(64), nullable=False),
                    sa.Column("owner", sa.String(64), nullable=False),
                    sa.Column("host", sa.String(255), nullable=False),
                    sa.Column("pid", sa.Integer, nullable=False),
                    sa.Column("heartbeat", _NOW, nullable=False),
                    sa.Column("claimed_at", _NOW, nullable=False),
                    sa.UniqueConstraint("run_uid", "content_hash", name="uq_claim_run_hash"))
    op.create_table("experiment", _id(),
                    sa.Column("uid", sa.String(255), nullable=False, unique=True),
                    sa.Column("created", _NOW, nullable=False))
    op.create_table("session_tree", _id(),
                    sa.Column("uid", sa.String(255), nullable=False, unique=True),
                    sa.Column("kind", sa.String(16), nullable=False),
                    sa.Column("config", sa.Text),
                    sa.Column("status", sa.Text),
                    sa.Column("created", _NOW, nullable=False),
                    sa.Column("updated", _NOW))
    op.create_table("store_meta",
                    sa.Column("key", sa.String(64), primary_key=True),
                    sa.Column("value", sa.String(255), nullable=False))
    op.create_table("run", _id(),
                    sa.Column("uid", sa.String(255), nullable=False),
                    _ref("experiment_id", "experiment.id", "CASCADE", True),
                    sa.Column("content_hash", sa.String(64), nullable=False),
                    sa.Column("document", sa.Text, nullable=False),
                    sa.Column("design_point", sa.Integer),
                    sa.Column("repetition", sa.Integer),
                    sa.Column("seed", sa.BigInteger),
                    sa.Column("levels", sa.Text),
                    sa.Column("file_sha256", sa.String(64)),
                    sa.Column("created", _NOW, nullable=False),
                    sa.UniqueConstraint("uid", "content_hash", name="uq_run_uid_hash"))
    _indexes("run", ("ix_run_experiment_id", ["experiment_id"]), ("ix_run_file_sha256", ["file_sha256"]),
             ("ix_run_uid", ["uid"]))
    op.create_table("run_instance", _id(),
                    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
                    _ref("run_id", "run.id", "CASCADE", False),
                    sa.Column("host", sa.String(255), nullable=False),
                    sa.Column("pid", sa.Integer, nullable=False),
                    sa.Column("start", _NOW, nullable=False),
                    sa.Column("end", _NOW),
                    sa.Column("status", sa.String(16), nullable=False),
                    sa.Column("error", sa.Text),
                    sa.Column("traceback", sa.Text),
                    sa.Column("heartbeat", _NOW),
                    sa.Column("results_dir", sa.Text))
    _indexes("run_instance", ("ix_run_instance_run_status", ["run_id", "status"]),
             ("ix_run_instance_status", ["status"]))
    op.create_table("phase", _id(),
                    _ref("instance_id", "run_instance.id", "CASCADE", False),
                    sa.Column("index", sa.Integer, nullable=False),
                    sa.Column("name", sa.String(255), nullable=False),
                    sa.Column("mode", sa.String(32), nullable=False),
                    sa.Column("config", sa.Text),
                    sa.Column("status", sa.String(16), nullable=False),
                    sa.Column("start", _NOW, nullable=False),
                    sa.Column("end", _NOW),
                    sa.UniqueConstraint("instance_id", "index", name="uq_phase_instance_index"))
    op.create_table("session_node", _id(),
                    _ref("tree_id", "session_tree.id", "CASCADE", False),
                    sa.Column("run_uid", sa.String(255), nullable=False),
                    sa.Column("content_hash", sa.String(64), nullable=False),
                    sa.Column("file", sa.Text),
                    sa.Column("depth", sa.Integer, nullable=False),
                    sa.Column("batch", sa.Integer, nullable=False),
                    sa.Column("direction", sa.Integer),
                    sa.Column("health", sa.String(16), nullable=False),
                    sa.Column("metric", sa.Float),
                    sa.Column("reason", sa.Text),
                    _ref("instance_id", "run_instance.id", "SET NULL", True),
                    sa.Column("created", _NOW, nullable=False),
                    sa.Column("updated", _NOW),
                    sa.UniqueConstraint("tree_id", "run_uid", name="uq_session_node_tree_run"))
    _indexes("session_node", ("ix_session_node_run_uid", ["run_uid"]), ("ix_session_node_tree_id", ["tree_id"]))
    op.create_table("stop_request",
                    _ref("instance_id", "run_instance.id", "CASCADE", False, primary_key=True),
                    sa.Column("requested", _NOW, nullable=False),
                    sa.Column("reason", sa.Text))
    op.create_table("checkpoint", _id(),
                    _ref("instance_id", "run_instance.id", "CASCADE", False),
                    _ref("phase_id", "phase.id", "CASCADE", True),
                    sa.Column("agent", sa.String(255), nullable=False),
                    sa.Column("step", sa.BigInteger),
                    sa.Column("episode", sa.Integer),
                    sa.Column("path", sa.Text, nullable=False),
                    sa.Column("sha256", sa.String(64)),
                    sa.Column("metric", sa.Float),
                    sa.Column("best", sa.Boolean, nullable=False),
                    sa.Column("created", _NOW, nullable=False))
    _indexes("checkpoint", ("ix_checkpoint_instance_agent", ["instance_id", "agent"]),
             ("ix_checkpoint_phase_id", ["phase_id"]))
    op.create_table("episode", _id(),
                    _ref("phase_id", "phase.id", "CASCADE", False),
                    sa.Column("worker", sa.Integer, nullable=False),
                    sa.Column("episode", sa.Integer, nullable=False),
                    sa.Column("agent", sa.String(255), nullable=False),
                    sa.Column("steps", sa.Integer, nullable=False),
                    sa.Column("reward", sa.Float),
                    sa.Column("objective", sa.Float),
                    sa.Column("wall_time", sa.Float),
                    sa.Column("extras", sa.Text))
    _indexes("episode", ("ix_episode_phase_episode", ["phase_id", "episode", "agent"]),
             ("ix_episode_phase_id", ["phase_id", "id"]))
    op.create_table("session_edge", _id(),
                    sa.Column("parent_id", _ID, sa.ForeignKey("session_node.id", ondelete="CASCADE"),
                              nullable=False),
                    sa.Column("child_id", _ID, sa.ForeignKey("session_node.id", ondelete="CASCADE"),
                              nullable=False, unique=True),
                    sa.Column("overrides", sa.Text),
                    sa.Column("source_phase", sa.String(255)),
                    sa.Column("source_instance_id", sa.Integer),
                    sa.Column("segment", sa.Text),
                    sa.Column("created", _NOW, nullable=False))
    _indexes("session_edge", ("ix_session_edge_parent_id", ["parent_id"]))
    op.create_table("step", _id(),
                    _ref("phase_id", "phase.id", "CASCADE", False),
                    sa.Column("worker", sa.Integer, nullable=False),
                    sa.Column("episode", sa.Integer, nullable=False),
                    sa.Column("step", sa.Integer, nullable=False),
                    sa.Column("agent", sa.String(255), nullable=False),
                    sa.Column("sensors", sa.Text),
                    sa.Column("actions", sa.Text),
                    sa.Column("rewards", sa.Text),
                    sa.Column("objective", sa.Float),
                    sa.Column("done", sa.Boolean, nullable=False))
    _indexes("step", ("ix_step_phase_episode", ["phase_id", "worker", "episode", "step"]))
    op.create_table("brain_source", _id(),
                    _ref("instance_id", "run_instance.id", "CASCADE", False),
                    _ref("phase_id", "phase.id", "CASCADE", True),
                    sa.Column("agent", sa.String(255), nullable=False),
                    sa.Column("source_kind", sa.String(32), nullable=False),
                    sa.Column("source_run_uid", sa.String(255)),
                    sa.Column("source_phase", sa.String(255)),
                    _ref("source_checkpoint_id", "checkpoint.id", "SET NULL", True),
                    sa.Column("source_path", sa.Text),
                    sa.Column("source_sha256", sa.String(64)))
    _indexes("brain_source", ("ix_brain_source_instance", ["instance_id", "agent"]),
             ("ix_brain_source_source_run_uid", ["source_run_uid"]))


_TABLES = ("brain_source", "step", "session_edge", "episode", "checkpoint", "stop_request", "session_node",
           "phase", "run_instance", "run", "store_meta", "session_tree", "experiment", "claim")


def downgrade() -> None:
    for table in _TABLES:  # children first
        op.drop_table(table)
