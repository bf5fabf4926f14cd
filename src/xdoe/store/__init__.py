"""The results store: SQLAlchemy 2 models, the :class:`Store` and its parts,
the :class:`RunRecorder` that records one run instance, and its results files.

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

Schema: SQLAlchemy Core tables (:mod:`xdoe.store.schema._tables`; every reader and
writer uses them without the ORM; the ORM models of
:mod:`xdoe.store.schema._models`, mapped onto the same tables, are kept for tests
and ad-hoc queries): experiment, run (uid + content hash:
the same uid with a changed document is a new run version), run_instance,
phase, episode, step, checkpoint, brain_source, claim, store_meta; session_tree,
session_node, session_edge (Core tables of :mod:`xdoe.store.sessions._sessions`,
created when first written).

Every SQL statement of xdoe is in this package (a test checks it), and
:class:`Store` is its only API. ``Store`` owns its parts, each holding its
own queries on the store's one :class:`~xdoe.store.schema._database.Database`
(engine, transactions):

* ``store.runs``: runs, instances, episodes and steps, the one "finished"
  rule (:mod:`xdoe.store._rules`), claims across processes, stop requests
  (sub-package ``runs/``, with ``store.checkpoints`` and ``store.rungs``);
* ``store.sessions``: session trees (``sessions/``);
* ``store.views``: status, export, the results table, scores, curves,
  lineage, the dashboard's pages (``views/``; one liveness rule with one
  heartbeat timeout, :mod:`xdoe.store._liveness`);
* ``store.recorder(...)``: the :class:`RunRecorder` that writes every row of
  a run instance (``recorder/``, with the results files).

The tables, ORM models, engine, schema version and migrations are in
``schema/``. No code outside this package imports its private modules.
``__all__`` holds :class:`Store`, the records and types its callers need,
and the URL helpers; the SQLAlchemy models (``Run``, ``RunInstance``...)
stay importable from here for tests and ad-hoc queries but are not part of
the public API.

Names are imported on first use (:mod:`xdoe._lazy`): the campaign views
(export, status, lineage) are not loaded by a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdoe._lazy import lazy_exports, public_names

if TYPE_CHECKING:  # the same names for type checkers (`Name as Name`: a re-export)
    from xdoe.store._store import Store as Store
    from xdoe.store.recorder._observer import RecorderObserver as RecorderObserver
    from xdoe.store.recorder._recorder import RunRecorder as RunRecorder
    from xdoe.store.runs._records import InstanceInfo as InstanceInfo, RunInfo as RunInfo, RunState as RunState
    from xdoe.store.runs._checkpoints import CheckpointInfo as CheckpointInfo, SourceRow as SourceRow
    from xdoe.store.runs._runs import ClaimHeartbeat as ClaimHeartbeat, new_owner as new_owner
    from xdoe.store.runs._rungs import PeerRungs as PeerRungs, RungRow as RungRow
    from xdoe.store.sessions._sessions import NodeInfo as NodeInfo, TreeInfo as TreeInfo
    from xdoe.store.recorder._steps import StepPolicy as StepPolicy, StoreStepsError as StoreStepsError
    from xdoe.store._liveness import HEARTBEAT_TIMEOUT as HEARTBEAT_TIMEOUT
    from xdoe.store.schema._tables import SCHEMA_VERSION as SCHEMA_VERSION
    from xdoe.store.recorder._results import DEFAULT_RESULTS_ROOT as DEFAULT_RESULTS_ROOT
    from xdoe.store.recorder._results_paths import ResultsPaths as ResultsPaths, safe_name as safe_name
    from xdoe.store.views._export import BRANCH_COLUMN as BRANCH_COLUMN, EXPORT_COLUMNS as EXPORT_COLUMNS
    from xdoe.store.views._lineage import render_lineage as render_lineage
    from xdoe.store.views._curves import (
        CurvePhases as CurvePhases,
        curve_phases as curve_phases,
        phase_means as phase_means,
        run_episodes as run_episodes,
        steps_x as steps_x,
    )
    from xdoe.store._json import canonical_json as canonical_json, document_hash as document_hash
    from xdoe.store.schema._engine import (
        ENV_VAR as ENV_VAR,
        absolute_url as absolute_url,
        mask_url as mask_url,
        resolve_url as resolve_url,
        url_database as url_database,
    )
    # importable, not public (not in __all__): the ORM models, for tests and ad-hoc queries
    from xdoe.store.schema._models import (
        Base,
        BrainSource,
        Checkpoint,
        Claim,
        Episode,
        Experiment,
        Phase,
        Run,
        RunInstance,
        Rung,
        Step,
        StopRequest,
        StoreMeta,
    )
    from xdoe.store.schema._tables import utcnow
    from xdoe.store.sessions._sessions import session_edge, session_node, session_tree

_EXPORTS = {
    "xdoe.store._store": ["Store"],
    "xdoe.store.recorder._recorder": ["RunRecorder"],
    "xdoe.store.recorder._observer": ["RecorderObserver"],
    "xdoe.store.runs._records": ["InstanceInfo", "RunInfo", "RunState"],
    "xdoe.store.runs._checkpoints": ["CheckpointInfo", "SourceRow"],
    "xdoe.store.runs._runs": ["ClaimHeartbeat", "new_owner"],
    # run_config.prune: the rungs runs report (xdoe.execution._pruning)
    "xdoe.store.runs._rungs": ["PeerRungs", "RungRow"],
    "xdoe.store.sessions._sessions": ["NodeInfo", "TreeInfo"],
    "xdoe.store.recorder._steps": ["StepPolicy", "StoreStepsError"],
    "xdoe.store._liveness": ["HEARTBEAT_TIMEOUT"],
    "xdoe.store.schema._tables": ["SCHEMA_VERSION"],
    "xdoe.store.recorder._results": ["DEFAULT_RESULTS_ROOT"],
    "xdoe.store.recorder._results_paths": ["ResultsPaths", "safe_name"],
    "xdoe.store.views._export": ["BRANCH_COLUMN", "EXPORT_COLUMNS"],
    "xdoe.store.views._lineage": ["render_lineage"],
    # learning curves without the episode table (xdoe.analysis.plots.plot_curves), defined once
    "xdoe.store.views._curves": ["CurvePhases", "curve_phases", "phase_means", "run_episodes", "steps_x"],
    "xdoe.store._json": ["canonical_json", "document_hash"],
    "xdoe.store.schema._engine": ["ENV_VAR", "absolute_url", "mask_url", "resolve_url", "url_database"],
}
_UNLISTED = {
    "xdoe.store.schema._models": [
        "Base", "BrainSource", "Checkpoint", "Claim", "Episode", "Experiment", "Phase", "Run", "RunInstance",
        "Rung", "Step", "StopRequest", "StoreMeta",
    ],
    "xdoe.store.schema._tables": ["utcnow"],
    "xdoe.store.sessions._sessions": ["session_edge", "session_node", "session_tree"],
}

__all__ = public_names(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, unlisted=_UNLISTED)
