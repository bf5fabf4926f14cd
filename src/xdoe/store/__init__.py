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

Schema (see :mod:`xdoe.store._models`; the run path uses the Core tables of
:mod:`xdoe.store._tables`, without the ORM): experiment, run (uid + content hash:
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

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.store._checkpoint_rows import CheckpointInfo as CheckpointInfo, SourceRow as SourceRow
    from xdoe.store._claims import (
        ClaimHeartbeat as ClaimHeartbeat,
        ClaimInfo as ClaimInfo,
        claim_of as claim_of,
        claim_run as claim_run,
        fail_running_instances as fail_running_instances,
        heartbeat_claim as heartbeat_claim,
        new_owner as new_owner,
        release_claim as release_claim,
        run_finished as run_finished,
    )
    from xdoe.store._engine import DEFAULT_URL as DEFAULT_URL, ENV_VAR as ENV_VAR, mask_url as mask_url
    from xdoe.store._json import canonical_json as canonical_json, document_hash as document_hash
    from xdoe.store._models import StopRequest as StopRequest
    from xdoe.store._tables import INSTANCE_STATUSES as INSTANCE_STATUSES, SCHEMA_VERSION as SCHEMA_VERSION
    from xdoe.store._recorder import RunRecorder as RunRecorder
    from xdoe.store._results import (
        DEFAULT_RESULTS_ROOT as DEFAULT_RESULTS_ROOT,
        EPISODE_KEYS as EPISODE_KEYS,
        TRANSACTION_COLUMNS as TRANSACTION_COLUMNS,
        ResultsPaths as ResultsPaths,
        safe_name as safe_name,
    )
    from xdoe.store._liveness import (
        HEARTBEAT_TIMEOUT as HEARTBEAT_TIMEOUT,
        dead_reason as dead_reason,
        instance_alive as instance_alive,
    )
    from xdoe.store._steps import StepPolicy as StepPolicy, StoreStepsError as StoreStepsError
    from xdoe.store._store import (
        InstanceInfo as InstanceInfo, RunInfo as RunInfo, RunState as RunState, Store as Store,
    )
    # campaign views (issue 4): one results table, status, lineage
    from xdoe.store._export import (
        EXPORT_COLUMNS as EXPORT_COLUMNS,
        ExportResult as ExportResult,
        export_episodes as export_episodes,
    )
    from xdoe.store._results_table import (
        BRANCH_COLUMN as BRANCH_COLUMN,
        EpisodeTable as EpisodeTable,
        episode_table as episode_table,
    )
    from xdoe.store._scores import ScoreTable as ScoreTable, run_scores as run_scores
    from xdoe.store._lineage import build_lineage as build_lineage, render_lineage as render_lineage
    from xdoe.store._status import (
        CampaignStatus as CampaignStatus,
        RunStatus as RunStatus,
        campaign_status as campaign_status,
    )
    # stop requests (honoured by the executor) and the dashboard's queries (issue 15)
    from xdoe.store._stop import (
        clear_stop_request as clear_stop_request,
        request_stop as request_stop,
        stop_requested as stop_requested,
    )
    from xdoe.store._dashboard import (
        CampaignSummary as CampaignSummary,
        RunsPage as RunsPage,
        campaign_runs as campaign_runs,
        campaign_summaries as campaign_summaries,
    )
    from xdoe.store._runview import RunView as RunView, curve_points as curve_points, run_view as run_view
    # session trees (issue 14; the tables SessionTree, SessionNode, SessionEdge are importable)
    from xdoe.store._sessions import (
        HEALTH_STATES as HEALTH_STATES,
        NodeInfo as NodeInfo,
        TreeInfo as TreeInfo,
        add_session_node as add_session_node,
        count_branch_children as count_branch_children,
        ensure_session_tables as ensure_session_tables,
        get_or_create_tree as get_or_create_tree,
        nodes_of_run as nodes_of_run,
        run_document as run_document,
        run_uids as run_uids,
        session_nodes as session_nodes,
        session_trees as session_trees,
        set_node_health as set_node_health,
        set_tree_status as set_tree_status,
    )
    # importable, not public (not in __all__)
    from xdoe.store._models import (
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
        StoreMeta,
    )
    from xdoe.store._tables import utcnow
    from xdoe.store._sessions import SessionEdge, SessionNode, SessionTree

_EXPORTS = {
    "xdoe.store._checkpoint_rows": ["CheckpointInfo", "SourceRow"],
    "xdoe.store._claims": [
        "ClaimHeartbeat", "ClaimInfo", "claim_of", "claim_run", "fail_running_instances", "heartbeat_claim",
        "new_owner", "release_claim", "run_finished",
    ],
    "xdoe.store._engine": ["DEFAULT_URL", "ENV_VAR", "mask_url"],
    "xdoe.store._json": ["canonical_json", "document_hash"],
    "xdoe.store._models": ["StopRequest"],
    "xdoe.store._tables": ["INSTANCE_STATUSES", "SCHEMA_VERSION"],
    "xdoe.store._recorder": ["RunRecorder"],
    "xdoe.store._results": [
        "DEFAULT_RESULTS_ROOT", "EPISODE_KEYS", "TRANSACTION_COLUMNS", "ResultsPaths", "safe_name",
    ],
    "xdoe.store._liveness": ["HEARTBEAT_TIMEOUT", "dead_reason", "instance_alive"],
    "xdoe.store._steps": ["StepPolicy", "StoreStepsError"],
    "xdoe.store._store": ["InstanceInfo", "RunInfo", "RunState", "Store"],
    # campaign views (issue 4): one results table, status, lineage
    "xdoe.store._export": ["EXPORT_COLUMNS", "ExportResult", "export_episodes"],
    "xdoe.store._results_table": ["BRANCH_COLUMN", "EpisodeTable", "episode_table"],
    "xdoe.store._scores": ["ScoreTable", "run_scores"],
    "xdoe.store._lineage": ["build_lineage", "render_lineage"],
    "xdoe.store._status": ["CampaignStatus", "RunStatus", "campaign_status"],
    # stop requests (honoured by the executor) and the dashboard's queries (issue 15)
    "xdoe.store._stop": ["clear_stop_request", "request_stop", "stop_requested"],
    "xdoe.store._dashboard": ["CampaignSummary", "RunsPage", "campaign_runs", "campaign_summaries"],
    "xdoe.store._runview": ["RunView", "curve_points", "run_view"],
    # session trees (issue 14; the tables SessionTree, SessionNode, SessionEdge are importable)
    "xdoe.store._sessions": [
        "HEALTH_STATES", "NodeInfo", "TreeInfo", "add_session_node", "count_branch_children",
        "ensure_session_tables", "get_or_create_tree", "nodes_of_run", "run_document", "run_uids",
        "session_nodes", "session_trees", "set_node_health", "set_tree_status",
    ],
}
_UNLISTED = {
    "xdoe.store._models": [
        "Base", "BrainSource", "Checkpoint", "Claim", "Episode", "Experiment", "Phase", "Run", "RunInstance",
        "Step", "StoreMeta",
    ],
    "xdoe.store._tables": ["utcnow"],
    "xdoe.store._sessions": ["SessionEdge", "SessionNode", "SessionTree"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, unlisted=_UNLISTED)
