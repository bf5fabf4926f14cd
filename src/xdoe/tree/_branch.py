"""Branching: a child session from a finished one.

``branch("taxi-0000:training", set=["brain.params.alpha=x0.5"], episodes=300)``
writes ``<output>/branches/run-taxi-0000_b01.yaml``: the parent's run
document with the overrides applied (:mod:`xdoe.tree._overrides`), the
segment length set on one phase, a seed derived from the parent's, and
``load:`` on every agent that saved a checkpoint in the parent, so every
brain starts from the parent's final checkpoint
(:mod:`xdoe.execution._lineage`); then it runs the child with
:func:`xdoe.execution.run` and records parent -> child in the store.

A child is a session of its tree, not a run of the design: its document has
no ``experiment_uid`` and no ``design_point`` (a branch of a design run
starts from a trained brain with other settings; counting it as a repetition
of the parent's design point would bias the design's analysis) but a
``session`` record (:class:`xdoe.documents.SessionInfo`: tree, parent, the
parent's content hash and phase, each override with the value it set, and,
as provenance, the experiment and design point the branch started from).
Children go into the ``branches/`` folder beside the design's run files, out
of the glob ``<output>/run-*.yaml`` that runs the design.

Names: the child of run ``U`` is ``U_bNN`` (file ``branches/run-U_bNN.yaml``),
so the files of a tree sort depth first under their parents (``_`` sorts
after the ``.`` of ``.yaml``). Seeds: the child's seed is
``SeedSequence(parent seed, spawn_key=(4, NN)).generate_state(1, uint32)[0]``.
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from xdoe._files import write_atomically
from xdoe.documents import uid_file_name
from xdoe.errors import InputError, RunError
from xdoe.tree._criteria import Assessment, HealthCriterion, ImprovementCriterion, SessionEpisodes
from xdoe.tree._overrides import Override, apply_overrides

if TYPE_CHECKING:
    from xdoe.execution import RunResult
    from xdoe.store import NodeInfo, Store

__all__ = ["Source", "BranchResult", "resolve_source", "child_document", "child_seed",
           "write_document", "branch", "judge", "newest_checkpoints", "tree_for", "tree_uid_for",
           "branch_folder", "SEED_KEY", "BRANCH_FOLDER"]

#: First element of the spawn key of a child's seed.
SEED_KEY = 4
#: The folder (inside a run folder) children's run documents are written to.
BRANCH_FOLDER = "branches"
_STEPS_CONDITION = "xdoe.conditions:MaxStepsTerminationCondition"
_ENV_CONDITION = "xdoe.conditions:EnvironmentTerminationCondition"


@dataclass(frozen=True)
class Source:
    """A finished session to branch from: a run instance (and optionally one
    of its phases), with its run document."""

    run_uid: str
    content_hash: str
    instance_id: int
    phase: str | None
    document: dict[str, Any]
    latest: bool  # the newest finished instance of its run (``load: experiment_run`` finds it)


@dataclass
class BranchResult:
    """What :func:`branch` made: the child ``uid``, its ``file``, its node id
    in the store, the overrides as applied, the run's result and the
    criterion's :class:`~xdoe.tree.Assessment` of it (both ``None`` with
    ``run=False``)."""

    uid: str
    file: Path
    node_id: int
    tree: str
    document: dict[str, Any]
    applied: list[dict[str, Any]] = field(default_factory=list)
    result: "RunResult | None" = None
    assessment: Assessment | None = None

    @property
    def verdict(self) -> Assessment | None:
        """The old name of :attr:`assessment` (issue 23.7)."""
        import warnings

        warnings.warn("BranchResult.verdict is now BranchResult.assessment", DeprecationWarning, stacklevel=2)
        return self.assessment


def _phase_names(document: dict[str, Any]) -> list[str]:
    return [next(iter(entry)) for entry in document.get("schedule", [])]


def resolve_source(store: "Store", node: str | int) -> Source:
    """The session ``node`` names: a run instance id (``12``), a run uid (its
    newest finished instance) or ``run-uid:phase``.

    Raises:
        InputError: no such instance or run (close matches listed), the
            instance did not finish, or the run has no such phase.
    """

    text = str(node).strip()
    phase: str | None = None
    if text.isascii() and text.isdigit():
        number = int(text) if len(text) <= 19 else 0  # ids are 64-bit: a longer one names nothing
        info = store.runs.instance(number) if 1 <= number <= 2**63 - 1 else None
        if info is None:
            raise InputError(f"store {store.url} has no run instance {text}")
    else:
        uid, _, phase_text = text.partition(":")
        phase = phase_text or None
        finished = store.runs.instances("finished", run_uid=uid)
        if not finished:
            if store.runs.instances(run_uid=uid):
                raise InputError(f"run {uid!r} has no finished instance in store {store.url}; "
                                 "branch from a finished session")
            uids = sorted(store.sessions.run_uids())
            close = difflib.get_close_matches(uid, uids, n=3)
            hint = f"did you mean: {', '.join(close)}" if close else f"runs there: {', '.join(uids[:10]) or 'none'}"
            raise InputError(f"store {store.url} has no run {uid!r}; {hint}")
        info = finished[-1]
    if info.status != "finished":
        raise InputError(f"run instance {info.id} of {info.run_uid!r} is {info.status}; "
                         "branch from a finished session")
    document = store.sessions.run_document(info.run_uid, info.content_hash)
    if document is None:  # pragma: no cover - an instance always has its run
        raise InputError(f"run {info.run_uid!r} has no stored document")
    names = _phase_names(document)
    if phase is not None and phase not in names:
        raise InputError(f"run {info.run_uid!r} has no phase {phase!r}; its phases: {', '.join(names)}")
    newest = store.runs.instances("finished", run_uid=info.run_uid)
    return Source(info.run_uid, info.content_hash, info.id, phase, document,
                  latest=bool(newest) and newest[-1].id == info.id)


def child_seed(parent_seed: int, number: int) -> int:
    """The seed of child ``number`` of a parent with ``parent_seed`` (uint32)."""
    from xdoe._random import seed_word

    return seed_word(parent_seed, SEED_KEY, number)


def _segment_phase(document: dict[str, Any], phase: str | None) -> int:
    names = _phase_names(document)
    if phase is not None:
        if phase not in names:
            raise InputError(f"--phase {phase!r}: the document has no such phase; its phases: "
                             f"{', '.join(names)}")
        return names.index(phase)
    for i, entry in enumerate(document["schedule"]):
        body = next(iter(entry.values())) or {}
        if (body.get("phase_config") or {}).get("mode", "train") == "train":
            return i
    return 0


def _set_segment(document: dict[str, Any], index: int, episodes: int | None, steps: int | None) -> None:
    body = next(iter(document["schedule"][index].values()))
    config = body.setdefault("phase_config", {})
    if episodes is not None:
        config["episodes"] = int(episodes)
    if steps is not None:
        # the executor never runs more episodes than this, and each has >= 1 step
        config["episodes"] = int(steps)
        simulation = body.setdefault("simulation", {})
        conditions = list(simulation.get("conditions") or [])
        if not conditions:  # an empty list means the environment's own episode ends
            conditions.append({"name": _ENV_CONDITION, "params": {}})
        conditions = [c for c in conditions if not str(c.get("name", "")).endswith("MaxStepsTerminationCondition")
                      or c.get("params", {}).get("episode_steps") is not None]
        for c in conditions:
            if str(c.get("name", "")).endswith("MaxStepsTerminationCondition"):
                c.setdefault("params", {})["phase_steps"] = int(steps)
                break
        else:
            conditions.append({"name": _STEPS_CONDITION, "params": {"phase_steps": int(steps)}})
        simulation["conditions"] = conditions


def newest_checkpoints(store: "Store", source: Source) -> dict[str, Any]:
    """Agent -> its newest :class:`~xdoe.execution.CheckpointInfo` in the
    source (in its phase, when it names one)."""
    from xdoe.execution import checkpoints_of

    newest: dict[str, Any] = {}
    for info in checkpoints_of(store, source.instance_id):
        if source.phase is not None and info.phase != source.phase:
            continue
        key = (info.phase_index if info.phase_index is not None else -1, info.step or 0, info.id)
        if info.agent not in newest or key > newest[info.agent][0]:
            newest[info.agent] = (key, info)
    return {agent: info for agent, (_, info) in newest.items()}


def branch_folder(output: str | Path) -> Path:
    """Where the children of a tree whose files are in ``output`` go:
    ``output/branches`` (``output`` itself when it is a ``branches`` folder)."""
    folder = Path(output)
    return folder if folder.name == BRANCH_FOLDER else folder / BRANCH_FOLDER


def tree_uid_for(store: "Store", source: Source) -> str:
    """The uid of the tree a child of ``source`` joins (see :func:`tree_for`),
    without creating anything."""


    for node in reversed(store.sessions.nodes_of_run(source.run_uid)):
        if node.content_hash == source.content_hash:
            return node.tree
    return source.run_uid


def child_document(store: "Store", source: Source, uid: str, number: int,
                   overrides: Sequence[Override | str] = (), *, episodes: int | None = None,
                   steps: int | None = None, phase: str | None = None,
                   tree: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The child's run document and the overrides as applied (see the module
    docstring): no ``experiment_uid`` and no ``design_point``, and a
    ``session`` record of ``tree`` (default :func:`tree_uid_for`), the parent
    and the overrides.

    Raises:
        InputError: both ``episodes`` and ``steps``, an unknown phase, or a bad override.
        RunError: no agent of the source saved a checkpoint.
    """
    if episodes is not None and steps is not None:
        raise InputError("give --episodes or --steps, not both")
    for name, value in (("episodes", episodes), ("steps", steps)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError(f"{name} must be a positive integer, not {value!r}")
    doc = copy.deepcopy(source.document)
    doc["uid"] = uid
    # a session of a tree, not a run of the design; where in a design it started is provenance
    origin = doc.pop("session", None) or {}
    experiment = doc.pop("experiment_uid", None) or origin.get("experiment")
    design_point = doc.pop("design_point", None) or origin.get("design_point")
    doc["seed"] = child_seed(int(doc.get("seed") or 0), number)
    _set_segment(doc, _segment_phase(doc, phase), episodes, steps)
    agents = newest_checkpoints(store, source)
    if not agents:
        raise RunError(f"run {source.run_uid!r} (instance {source.instance_id}) saved no checkpoint"
                       + (f" in phase {source.phase!r}" if source.phase else "") + ": nothing to branch from")
    for entry in doc["schedule"]:
        body = next(iter(entry.values())) or {}
        for agent in body.get("agents") or []:
            name = agent.get("name")
            if name not in agents:
                continue
            if source.latest:
                load: dict[str, Any] = {"agent": name, "experiment_run": source.run_uid}
                if source.phase is not None:
                    load["phase"] = source.phase
            else:  # an older instance: name its checkpoint file
                load = {"path": str(Path(agents[name].path).resolve())}
            agent["load"] = load
    doc, applied = apply_overrides(doc, overrides)
    session: dict[str, Any] = {"tree": tree or tree_uid_for(store, source), "parent": source.run_uid,
                               "parent_hash": source.content_hash}
    if source.phase is not None:
        session["phase"] = source.phase
    if applied:
        session["overrides"] = {a["key"]: a["result"] for a in applied}
    if experiment:
        session["experiment"] = experiment
    if design_point:
        session["design_point"] = design_point
    doc["session"] = session
    return doc, applied


def write_document(path: Path, document: dict[str, Any]) -> None:
    """Write a run document as canonical YAML, atomically. An existing file
    with the same text is kept; a different one is never overwritten.

    Raises:
        InputError: the file exists with other content.
    """
    from xdoe.documents import dump_canonical

    text = dump_canonical(document)
    if path.exists():
        if path.read_text(encoding="utf-8") == text:
            return
        raise InputError(f"{path} exists with other content; not overwriting it")
    # a file that appears meanwhile is refused too (no-clobber link), never replaced
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _free_uid(store: "Store", parent_uid: str, output: Path, start: int) -> tuple[str, int]:


    taken = store.sessions.run_uids()
    n = max(start, 1)
    while f"{parent_uid}_b{n:02d}" in taken or (output / f"run-{uid_file_name(f'{parent_uid}_b{n:02d}')}.yaml").exists():
        n += 1
    return f"{parent_uid}_b{n:02d}", n


def judge(store: "Store", result: "RunResult", criterion: HealthCriterion,
          parent_metric: float | None, goal: HealthCriterion | None = None) -> tuple[str, Assessment]:
    """``(health, assessment)`` of a session that ran: ``failed`` unless it
    finished, else ``goal`` / ``healthy`` / ``dead`` by the criteria."""
    if not result.ok or result.instance_id is None:
        return "failed", Assessment(False, None, result.error or result.status)
    episodes = SessionEpisodes.from_store(store, result.instance_id)
    assessment = criterion.evaluate(episodes, parent_metric)
    if goal is not None and assessment.metric is not None:
        reached = goal.evaluate(episodes, parent_metric)
        if reached.healthy:
            return "goal", Assessment(True, reached.metric, f"goal: {reached.reason}")
    return ("healthy" if assessment.healthy else "dead"), assessment


def tree_for(store: "Store", source: Source) -> tuple[Any, int]:
    """The tree a hand-made branch joins (the newest tree holding the parent,
    else a new ``branch`` tree named after it) and the parent's node id."""


    for node in reversed(store.sessions.nodes_of_run(source.run_uid)):
        if node.content_hash == source.content_hash:
            return store.sessions.get_or_create_tree(node.tree, "branch"), node.id
    tree = store.sessions.get_or_create_tree(source.run_uid, "branch")
    node_id = store.sessions.add_session_node(tree.id, source.run_uid, source.content_hash)
    episodes = SessionEpisodes.from_store(store, source.instance_id)
    criterion = ImprovementCriterion()
    store.sessions.set_node_health(node_id, "healthy", metric=criterion.measure(episodes),
                          reason=f"root · {criterion.describe(episodes)}", instance_id=source.instance_id)
    return tree, node_id


def branch(
    node: str | int,
    *,
    set: Sequence[str | Override] = (),  # noqa: A002 - mirrors the --set option
    episodes: int | None = None,
    steps: int | None = None,
    phase: str | None = None,
    run: bool = True,
    store: "Store | str | None" = None,
    output: str | Path | None = None,
    results: str | Path | None = None,
    store_steps: str = "none",
    criterion: HealthCriterion | None = None,
    progress: Callable[[Any], None] | None = None,
) -> BranchResult:
    """Branch a child session from ``node`` and (unless ``run=False``) run it.

    Args:
        node: a run instance id, a run uid (its newest finished instance) or
            ``"run-uid:phase"`` (load from that phase's final checkpoint).
        set: overrides ``KEY=VALUE`` (see :mod:`xdoe.tree._overrides`).
        episodes: the segment length of the trained phase in episodes (or ``steps``).
        steps: the segment length of the trained phase in steps (or ``episodes``).
        phase: the phase the segment length applies to (default: the first
            train-mode phase).
        run: run the child with :func:`xdoe.execution.run`.
        store: a store or URL (default ``$XRUN_STORE`` / ``sqlite:///_outputs/xrun.sqlite``).
        output: the run folder; the child document is written to its
            ``branches/`` folder (default: the folder of the parent's
            document when it is a session of a tree, else ``_outputs``).
        results: root of the results folders (default ``_outputs/results``).
        criterion: judges the child against its parent (default
            :class:`ImprovementCriterion` with its defaults).
        progress: passed to :func:`xdoe.execution.run` (phase starts, episode ends).

    Returns:
        :class:`BranchResult`; a child run that fails is recorded ``failed``
        (``result.status``), it does not raise.

    Raises:
        InputError: unknown node, phase or key (close matches listed), bad values.
        RunError: the parent saved no checkpoint.
        NoStoreError: there is no store at the URL (an input error: exit 2).
        StoreError: the store cannot be read or written.
    """
    from xdoe.execution import DEFAULT_RESULTS
    from xdoe.execution import run as run_document
    from xdoe.store import Store, document_hash

    own = not isinstance(store, Store)
    db: Store = Store(store, create=False) if own else store  # type: ignore[assignment]
    try:
        source = resolve_source(db, node)
        if output is None:
            files = [n.file for n in db.sessions.nodes_of_run(source.run_uid)
                     if n.file and n.content_hash == source.content_hash]
            output = Path(files[-1]).parent if files else Path("_outputs")
        output = branch_folder(output)
        uid, number = _free_uid(db, source.run_uid, output, db.sessions.count_branch_children(source.run_uid) + 1)
        document, applied = child_document(db, source, uid, number, set, episodes=episodes,
                                           steps=steps, phase=phase)
        file = output / f"run-{uid_file_name(uid)}.yaml"
        write_document(file, document)
        tree, parent_id = tree_for(db, source)
        segment = {"episodes": episodes} if episodes else ({"steps": steps} if steps else None)
        parents = {n.id: n for n in _nodes(db, tree.uid)}
        parent = parents.get(parent_id)
        node_id = db.sessions.add_session_node(tree.id, uid, document_hash(document), file=str(file),
            depth=(parent.depth + 1) if parent else 1, parent_id=parent_id, overrides=applied,
            source_phase=source.phase, source_instance_id=source.instance_id, segment=segment)
        out = BranchResult(uid, file, node_id, tree.uid, document, applied)
        if run:
            db.sessions.set_node_health(node_id, "running")
            out.result = run_document(file, store=db, results=DEFAULT_RESULTS if results is None else results,
                                      store_steps=store_steps, progress=progress)
            health, out.assessment = judge(db, out.result, criterion or ImprovementCriterion(),
                                           parent.metric if parent else None)
            db.sessions.set_node_health(node_id, health, metric=out.assessment.metric, reason=out.assessment.reason,
                               instance_id=out.result.instance_id)
        return out
    finally:
        if own:
            db.close()


def _nodes(store: "Store", tree: str) -> "list[NodeInfo]":


    return store.sessions.session_nodes(tree)
