"""Growing a tree of sessions automatically (``xrun grow SESSION.yaml``).

The rules, applied to what the store holds (so a killed grow, started again,
continues the same tree: nothing planned is lost, nothing finished runs twice):

1. Sessions planned but not judged yet (``pending``/``running``) run first,
   at most ``max_parallel`` at a time, through the executor's backends
   (``jobs``/``dask``; each run is claimed, skipped when it finished before,
   resumed when it was interrupted), and are judged: ``goal`` when the goal
   criterion holds, else ``healthy`` or ``dead`` by the health criterion
   against the parent's metric (``failed`` when the run failed).
2. Growth stops at the first ``goal`` node, or when ``max_sessions`` nodes exist.
3. The node to extend is the *last healthy node*: among healthy nodes below
   ``max_depth`` with attempts left, the one of the latest round, the best
   metric first. A dead or failed node is never extended.
4. A node's attempts are, in order: continue unchanged (attempt 0), then each
   direction of the config (attempt k applies direction k on top of the
   node's own configuration; a direction that changes nothing there, such
   as setting the value the node already has, is skipped). The next ``max_parallel`` untried attempts are
   planned as children (``<uid>_bNN`` with NN = attempt + 1) of one round;
   when no node has attempts left, growth stops (``exhausted``).

The children's documents are sessions of the tree, not runs of a design
(see :mod:`xdoe.tree._branch`): written to ``<output>/branches/``, with a
``session`` record instead of ``experiment_uid`` and ``design_point``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from xdoe.errors import InputError
from xdoe.documents import uid_file_name
from xdoe.tree._branch import Source, branch_folder, child_document, judge, write_document
from xdoe.tree._config import SessionConfig, load_session_config
from xdoe.tree._overrides import apply_overrides

if TYPE_CHECKING:
    from xdoe.store import NodeInfo, Store

__all__ = ["GrowResult", "grow", "best_path"]

FINAL = ("healthy", "dead", "goal", "failed")


@dataclass
class GrowResult:
    """How growing ended: ``status`` (``goal``, ``max_sessions``,
    ``exhausted``, or ``busy`` when another live process runs one of its
    sessions), the tree's ``nodes``, the ``best`` path (root first) and
    how many sessions this call ran (``ran``)."""

    tree: str
    status: str
    nodes: list["NodeInfo"] = field(default_factory=list)
    best: list["NodeInfo"] = field(default_factory=list)
    ran: int = 0


def best_path(nodes: list["NodeInfo"]) -> list["NodeInfo"]:
    """Root-first path to the best node: a goal node, else the healthy
    node with the highest metric (the deeper on ties)."""
    by_id = {n.id: n for n in nodes}
    good = [n for n in nodes if n.health in ("goal", "healthy") and n.metric is not None]
    if not good:
        return [n for n in nodes if n.parent_id is None][:1]
    best = max(good, key=lambda n: (n.health == "goal", n.metric, n.depth, -n.id))
    path = [best]
    while path[-1].parent_id is not None and path[-1].parent_id in by_id:
        path.append(by_id[path[-1].parent_id])
    return path[::-1]


def _store_url(store: "Store | str | None") -> str | None:
    from xdoe.store import Store

    return store.database.full_url if isinstance(store, Store) else store


def _extendable(store: "Store", nodes: list["NodeInfo"], config: SessionConfig,
                noops: dict[tuple[int, int], bool]) -> tuple["NodeInfo", list[int]] | None:
    """The node to extend and its attempts left (see the module docstring);
    a direction that would change nothing at a node is not an attempt there."""
    attempts = len(config.directions) + 1
    tried: dict[int, set[int]] = {}
    for n in nodes:
        if n.parent_id is not None and n.direction is not None:
            tried.setdefault(n.parent_id, set()).add(n.direction)
    candidates = []
    for n in nodes:
        if n.health != "healthy" or n.depth >= config.limits.max_depth:
            continue
        left = [a for a in range(attempts) if a not in tried.get(n.id, set())
                and (a == 0 or not _noop(store, n, config, a, noops))]
        if left:
            candidates.append((n, left))
    if not candidates:
        return None
    return max(candidates, key=lambda c: (c[0].batch, c[0].metric if c[0].metric is not None else float("-inf"), -c[0].id))


def _noop(store: "Store", node: "NodeInfo", config: SessionConfig, attempt: int,
          cache: dict[tuple[int, int], bool]) -> bool:
    key = (node.id, attempt)
    if key not in cache:
        document = _document(store, node)
        cache[key] = apply_overrides(document, config.directions[attempt - 1])[0] == document
    return cache[key]


def _document(store: "Store", node: "NodeInfo") -> dict:
    """The run document of a node that ran, as its run instance recorded it."""

    info = store.runs.instance(node.instance_id) if node.instance_id is not None else None
    document = store.sessions.run_document(node.run_uid, info.content_hash if info else node.content_hash)
    if document is None:  # pragma: no cover - a judged node always ran
        raise InputError(f"session {node.run_uid}: its run document is not in the store")
    return document


def _plan_children(store: "Store", config: SessionConfig, tree_id: int, parent: "NodeInfo",
                   attempts: list[int], batch: int, report: Callable[[str], None]) -> None:
    from xdoe.store import document_hash

    document = _document(store, parent)
    assert parent.instance_id is not None
    source = Source(parent.run_uid, parent.content_hash, parent.instance_id, None, document,
                    latest=_is_latest(store, parent))
    for attempt in attempts:
        overrides = config.directions[attempt - 1] if attempt else []
        uid = f"{parent.run_uid}_b{attempt + 1:02d}"
        child, applied = child_document(store, source, uid, attempt + 1, overrides,
                                        episodes=config.episodes, steps=config.steps, phase=config.phase,
                                        tree=config.uid)
        file = branch_folder(config.output) / f"run-{uid_file_name(uid)}.yaml"
        write_document(file, child)
        segment = {"episodes": config.episodes} if config.episodes else (
            {"steps": config.steps} if config.steps else None)
        store.sessions.add_session_node(tree_id, uid, document_hash(child), file=str(file),
                               depth=parent.depth + 1, batch=batch, direction=attempt, parent_id=parent.id,
                               overrides=applied, source_instance_id=parent.instance_id, segment=segment)
        what = "continue unchanged" if not attempt else f"direction {attempt}: " + ", ".join(o.spec for o in overrides)
        report(f"planned {uid} from {parent.run_uid} ({what})")


def _is_latest(store: "Store", node: "NodeInfo") -> bool:
    finished = store.runs.instances("finished", run_uid=node.run_uid)
    return bool(finished) and finished[-1].id == node.instance_id


def _run_pending(store: "Store", config: SessionConfig, nodes: list["NodeInfo"], *, jobs: int,
                 dask: str | None, results: str | Path | None, store_steps: str,
                 report: Callable[[str], None]) -> tuple[int, list[str]]:
    """Run and judge the sessions not judged yet; ``(runs executed, sessions
    another live process is running)``."""
    from xdoe.campaign import CampaignOptions, RunTask, make_backend

    todo = [n for n in nodes if n.health not in FINAL]
    by_id = {n.id: n for n in nodes}
    by_key: dict[str, NodeInfo] = {}
    tasks = []
    options = CampaignOptions(store_url=_store_url(store), store_steps=store_steps, dask=dask,
                              results=None if results is None else str(Path(results).resolve()),
                              jobs=max(1, min(jobs, config.limits.max_parallel)), in_process=True)
    for n in todo:
        if n.file is None or not Path(n.file).is_file():
            raise InputError(f"session {n.run_uid}: its run document {n.file} is gone")
        file = str(Path(n.file).resolve())  # absolute: backends may run elsewhere
        store.sessions.set_node_health(n.id, "running")
        task = RunTask(file=file, options=options)
        by_key[task.key] = n
        tasks.append(task)
    ran = 0
    busy: list[str] = []
    with make_backend(options) as backend:
        for result in backend.map_runs(tasks):
            node = by_key[str(result.task_key)]
            if result.status == "claimed":  # another grow (or xrun) runs it right now
                busy.append(node.run_uid)
                report(f"{node.run_uid}: running in another process ({result.note or 'claimed'})")
                continue
            parent = by_id.get(node.parent_id) if node.parent_id is not None else None
            health, assessment = judge(store, result, config.criterion,
                                       None if parent is None else parent.metric, config.goal)
            store.sessions.set_node_health(node.id, health, metric=assessment.metric, reason=assessment.reason,
                                  instance_id=result.instance_id)
            ran += result.status != "skipped"
            metric = "-" if assessment.metric is None else f"{assessment.metric:.4g}"
            report(f"{node.run_uid}: {health} (metric {metric}; {assessment.reason})")
    return ran, busy


def grow(
    config: SessionConfig | str | Path,
    *,
    store: "Store | str | None" = None,
    results: str | Path | None = None,
    jobs: int = 1,
    dask: str | None = None,
    store_steps: str = "none",
    report: Callable[[str], None] | None = None,
) -> GrowResult:
    """Grow the tree a session config describes (see the module docstring).

    Args:
        config: a :class:`SessionConfig` or the path of a session config file.
        store: a store or URL (default ``$XRUN_STORE`` / ``sqlite:///_outputs/xrun.sqlite``);
            with ``jobs > 1`` or ``dask`` the store must be reachable by URL.
        results: root of the results folders (default ``_outputs/results``).
        jobs: how many sessions of one round run at once in processes (at most ``max_parallel``).
        dask: a Dask scheduler address (or ``local``) to run the sessions of a round on.
        report: called with one line per planned or judged session.

    Returns:
        :class:`GrowResult`.

    Raises:
        DocumentError: the session config is invalid (file:line and key).
        InputError: the tree exists with a different root, segment,
            criteria or directions.
        StoreError: the store cannot be read or written.
    """
    from xdoe.execution import DEFAULT_RESULTS
    from xdoe.store import Store, canonical_json, document_hash

    if not isinstance(config, SessionConfig):
        config = load_session_config(config)
    say = report or (lambda line: None)
    own = not isinstance(store, Store)
    db: Store = Store(store) if own else store  # type: ignore[assignment]
    results = DEFAULT_RESULTS if results is None else results
    try:
        tree = db.sessions.get_or_create_tree(config.uid, "grow", config.shape)
        if tree.kind != "grow" or canonical_json(tree.config) != canonical_json(config.shape):
            raise InputError(f"tree {config.uid!r} exists in store {db.url} with another root, segment, "
                             "criteria or directions; give the session config another uid")
        if config.write_root:
            write_document(config.root_file, config.root)
        db.sessions.add_session_node(tree.id, str(config.root["uid"]), document_hash(config.root),
                            file=str(config.root_file), depth=0, batch=0)
        ran = 0
        noops: dict[tuple[int, int], bool] = {}
        while True:
            nodes = db.sessions.session_nodes(config.uid)
            if any(n.health not in FINAL for n in nodes):
                done, busy = _run_pending(db, config, nodes, jobs=jobs, dask=dask, results=results,
                                          store_steps=store_steps, report=say)
                ran += done
                if busy:
                    status = "busy"
                    nodes = db.sessions.session_nodes(config.uid)
                    break
                continue
            if any(n.health == "goal" for n in nodes):
                status = "goal"
                break
            if len(nodes) >= config.limits.max_sessions:
                status = "max_sessions"
                break
            found = _extendable(db, nodes, config, noops)
            if found is None:
                status = "exhausted"
                break
            parent, left = found
            room = config.limits.max_sessions - len(nodes)
            batch = max(n.batch for n in nodes) + 1
            _plan_children(db, config, tree.id, parent, left[:min(room, config.limits.max_parallel)],
                           batch, say)
        db.sessions.set_tree_status(config.uid, status)
        return GrowResult(config.uid, status, nodes, best_path(nodes), ran)
    finally:
        if own:
            db.close()
