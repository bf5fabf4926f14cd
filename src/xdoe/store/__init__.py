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
phase, episode, step, checkpoint, brain_source, claim, store_meta.

Names are imported on first use (:mod:`xdoe._lazy`): the campaign views
(export, status, lineage) are not loaded by a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports

if TYPE_CHECKING:
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
    from xdoe.store._engine import DEFAULT_URL, ENV_VAR
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
        StoreMeta,
        utcnow,
    )
    from xdoe.store._recorder import DEFAULT_RESULTS_ROOT, RunRecorder
    from xdoe.store._results import EPISODE_KEYS, TRANSACTION_COLUMNS, ResultsPaths, safe_name
    from xdoe.store._steps import StepPolicy, StoreStepsError
    from xdoe.store._store import InstanceInfo, RunInfo, Store
    # campaign views (issue 4)
    from xdoe.store._export import EXPORT_COLUMNS, ExportResult, export_episodes
    from xdoe.store._lineage import build_lineage, render_lineage
    from xdoe.store._status import CampaignStatus, RunStatus, campaign_status

__all__ = [
    "Store",
    "RunRecorder",
    "RunInfo",
    "InstanceInfo",
    "ResultsPaths",
    "StepPolicy",
    "StoreStepsError",
    "canonical_json",
    "document_hash",
    "safe_name",
    "utcnow",
    "DEFAULT_URL",
    "DEFAULT_RESULTS_ROOT",
    "ENV_VAR",
    "EPISODE_KEYS",
    "TRANSACTION_COLUMNS",
    "INSTANCE_STATUSES",
    "SCHEMA_VERSION",
    "Base",
    "StoreMeta",
    "Experiment",
    "Run",
    "RunInstance",
    "Phase",
    "Episode",
    "Step",
    "Checkpoint",
    "BrainSource",
    "Claim",
    "ClaimInfo",
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
    "EXPORT_COLUMNS",
    "campaign_status",
    "CampaignStatus",
    "RunStatus",
    "build_lineage",
    "render_lineage",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {
    "xdoe.store._claims": ["ClaimHeartbeat", "ClaimInfo", "claim_of", "claim_run",
                           "fail_running_instances", "heartbeat_claim", "new_owner",
                           "release_claim", "run_finished"],
    "xdoe.store._engine": ["DEFAULT_URL", "ENV_VAR"],
    "xdoe.store._json": ["canonical_json", "document_hash"],
    "xdoe.store._models": ["INSTANCE_STATUSES", "SCHEMA_VERSION", "Base", "BrainSource",
                           "Checkpoint", "Claim", "Episode", "Experiment", "Phase", "Run",
                           "RunInstance", "Step", "StoreMeta", "utcnow"],
    "xdoe.store._recorder": ["DEFAULT_RESULTS_ROOT", "RunRecorder"],
    "xdoe.store._results": ["EPISODE_KEYS", "TRANSACTION_COLUMNS", "ResultsPaths", "safe_name"],
    "xdoe.store._steps": ["StepPolicy", "StoreStepsError"],
    "xdoe.store._store": ["InstanceInfo", "RunInfo", "Store"],
    "xdoe.store._export": ["EXPORT_COLUMNS", "ExportResult", "export_episodes"],
    "xdoe.store._lineage": ["build_lineage", "render_lineage"],
    "xdoe.store._status": ["CampaignStatus", "RunStatus", "campaign_status"],
})
