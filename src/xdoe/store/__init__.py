"""The results store: SQLAlchemy 2 models, the :class:`Store` facade, the
:class:`RunRecorder` that records one run instance, and its results files.

A URL picks the backend: ``Store()`` opens ``$XRUN_STORE`` or
``sqlite:///_outputs/xrun.sqlite``; ``Store("postgresql+psycopg://...")`` a
shared PostgreSQL database. Typical use by the executor::

    store = Store()
    with store.recorder(document, results_root=Path("_outputs/results"), store_steps="every:10") as rec:
        rec.phase_started(0, "training", "train", {"worker": 2, "episodes": 100})
        rec.episode_finished(worker=0, episode=0, agent="learner", steps=200, reward=-13.0,
                             objective=-13.0, wall_time=0.12)
        rec.phase_finished()
    # leaving the block finishes the instance ("failed" with the traceback on an exception)

Schema (see :mod:`xdoe.store._models`): experiment, run (uid + content hash:
the same uid with a changed document is a new run version), run_instance,
phase, episode, step, checkpoint, brain_source, claim, store_meta; session_tree,
session_node, session_edge (:mod:`xdoe.store._sessions`, created when first used).

Every SQL statement of xdoe is in this package (a test checks it): the
:class:`Store` facade answers every query (one "finished" rule and one
liveness rule with one heartbeat timeout, :mod:`xdoe.store._rules`), the
:class:`RunRecorder` writes every row of a run instance, the claim functions
serialise runs across processes. ``__all__`` holds the facade and its value
types; the SQLAlchemy models (``Run``, ``RunInstance``...) stay importable from
here for tests and ad-hoc queries but are not part of the public API.

Names are imported on first use (:mod:`xdoe._lazy`): the campaign views
(export, status, lineage) are not loaded by a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
    from xdoe.store._checkpoint_rows import CheckpointInfo, SourceRow
    from xdoe.store._claims import (
        ClaimHeartbeat,
        ClaimInfo,
        claim_of,
        claim_run,
        fail_running_instances,
        heartbeat_claim,
        new_owner,
        release_claim,
        run_finished,
    )
    from xdoe.store._engine import DEFAULT_URL, ENV_VAR, mask_url
    from xdoe.store._results_table import EpisodeTable, episode_table
    from xdoe.store._json import canonical_json, document_hash
    from xdoe.store._models import (
        INSTANCE_STATUSES,
        SCHEMA_VERSION,
        Base,
        BrainSource,
        Checkpoint,
        Claim,
        Episode,
        Experiment,
        Phase,
        Run,
        RunInstance,
        Step,
        StopRequest,
        StoreMeta,
        utcnow,
    )
    from xdoe.store._recorder import RunRecorder
    from xdoe.store._results import (
        DEFAULT_RESULTS_ROOT,
        EPISODE_KEYS,
        TRANSACTION_COLUMNS,
        ResultsPaths,
        safe_name,
    )
    from xdoe.store._liveness import HEARTBEAT_TIMEOUT, dead_reason, instance_alive
    from xdoe.store._steps import StepPolicy, StoreStepsError
    from xdoe.store._store import InstanceInfo, RunInfo, Store
    # campaign views (issue 4)
    from xdoe.store._export import EXPORT_COLUMNS, ExportResult, export_episodes
    from xdoe.store._lineage import build_lineage, render_lineage
    from xdoe.store._status import CampaignStatus, RunStatus, campaign_status
    # stop requests and the dashboard's queries (issue 15)
    from xdoe.store._dashboard import CampaignSummary, RunsPage, campaign_runs, campaign_summaries
    from xdoe.store._runview import RunView, curve_points, run_view
    from xdoe.store._stop import clear_stop_request, request_stop, stop_requested
    # session trees (issue 14)
    from xdoe.store._sessions import (
        HEALTH_STATES,
        NodeInfo,
        SessionEdge,
        SessionNode,
        SessionTree,
        TreeInfo,
        add_session_node,
        count_branch_children,
        ensure_session_tables,
        get_or_create_tree,
        nodes_of_run,
        run_document,
        run_uids,
        session_nodes,
        session_trees,
        set_node_health,
        set_tree_status,
    )

__all__ = [
    # the facade
    "Store",
    "RunRecorder",
    # its value types
    "RunInfo",
    "InstanceInfo",
    "CheckpointInfo",
    "SourceRow",
    "ResultsPaths",
    "StepPolicy",
    "StoreStepsError",
    "ClaimInfo",
    "INSTANCE_STATUSES",
    # the rules and constants
    "HEARTBEAT_TIMEOUT",
    "DEFAULT_URL",
    "DEFAULT_RESULTS_ROOT",
    "ENV_VAR",
    "EPISODE_KEYS",
    "TRANSACTION_COLUMNS",
    "SCHEMA_VERSION",
    "instance_alive",
    "dead_reason",
    "canonical_json",
    "document_hash",
    "safe_name",
    "mask_url",
    # claims: at most one process executes a run version at a time
    "ClaimHeartbeat",
    "new_owner",
    "claim_run",
    "heartbeat_claim",
    "release_claim",
    "claim_of",
    "run_finished",
    "fail_running_instances",
    # campaign views (issue 4): one results table, status, lineage
    "export_episodes",
    "ExportResult",
    "episode_table",
    "EpisodeTable",
    "EXPORT_COLUMNS",
    "campaign_status",
    "CampaignStatus",
    "RunStatus",
    "build_lineage",
    "render_lineage",
    # stop requests (honoured by the executor) and the dashboard's queries (issue 15)
    "request_stop",
    "stop_requested",
    "clear_stop_request",
    "StopRequest",
    "campaign_summaries",
    "CampaignSummary",
    "campaign_runs",
    "RunsPage",
    "run_view",
    "RunView",
    "curve_points",
    # session trees (issue 14; the tables SessionTree, SessionNode, SessionEdge are importable)
    "HEALTH_STATES",
    "TreeInfo",
    "NodeInfo",
    "ensure_session_tables",
    "get_or_create_tree",
    "set_tree_status",
    "add_session_node",
    "set_node_health",
    "session_trees",
    "session_nodes",
    "nodes_of_run",
    "count_branch_children",
    "run_uids",
    "run_document",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.store._checkpoint_rows": ["CheckpointInfo", "SourceRow"],
    "xdoe.store._claims": ["ClaimHeartbeat", "ClaimInfo", "claim_of", "claim_run",
                           "fail_running_instances", "heartbeat_claim", "new_owner",
                           "release_claim", "run_finished"],
    "xdoe.store._engine": ["DEFAULT_URL", "ENV_VAR", "mask_url"],
    "xdoe.store._json": ["canonical_json", "document_hash"],
    # the schema: importable for tests and ad-hoc queries, not in __all__
    "xdoe.store._models": ["INSTANCE_STATUSES", "SCHEMA_VERSION", "Base", "BrainSource",
                           "Checkpoint", "Claim", "Episode", "Experiment", "Phase", "Run",
                           "RunInstance", "Step", "StopRequest", "StoreMeta", "utcnow"],
    "xdoe.store._recorder": ["RunRecorder"],
    "xdoe.store._results": ["DEFAULT_RESULTS_ROOT", "EPISODE_KEYS", "TRANSACTION_COLUMNS", "ResultsPaths",
                            "safe_name"],
    "xdoe.store._liveness": ["HEARTBEAT_TIMEOUT", "dead_reason", "instance_alive"],
    "xdoe.store._steps": ["StepPolicy", "StoreStepsError"],
    "xdoe.store._store": ["InstanceInfo", "RunInfo", "Store"],
    "xdoe.store._export": ["EXPORT_COLUMNS", "ExportResult", "export_episodes"],
    "xdoe.store._results_table": ["EpisodeTable", "episode_table"],
    "xdoe.store._lineage": ["build_lineage", "render_lineage"],
    "xdoe.store._status": ["CampaignStatus", "RunStatus", "campaign_status"],
    "xdoe.store._stop": ["clear_stop_request", "request_stop", "stop_requested"],
    "xdoe.store._dashboard": ["CampaignSummary", "RunsPage", "campaign_runs", "campaign_summaries"],
    "xdoe.store._runview": ["RunView", "curve_points", "run_view"],
    "xdoe.store._sessions": ["HEALTH_STATES", "NodeInfo", "SessionEdge", "SessionNode",
                             "SessionTree", "TreeInfo", "add_session_node", "count_branch_children",
                             "ensure_session_tables", "get_or_create_tree", "nodes_of_run",
                             "run_document", "run_uids", "session_nodes", "session_trees", "set_node_health",
                             "set_tree_status"],
})
