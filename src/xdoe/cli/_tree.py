"""``xrun branch``, ``xrun grow`` and ``xrun tree``: training as a tree of sessions.

Exit codes: ``branch`` 0 when the child finished (or was only written with
``--no-run``), 1 when it failed, 2 for unusable input (unknown node, phase or
key: one line, nothing written); ``grow`` 0 when the goal was reached, 1 when
growth stopped at a limit or ran out of directions, 2 for an invalid session
config; ``tree`` 0, 2 for an unknown experiment or node. A store that cannot
be read: 1.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

import click

from xdoe.cli._common import (EXIT_FAILED, EXIT_INPUT, EXIT_OK, Number, console, fail, handle_errors, open_store_or_exit,
                              store_option)
from xdoe.store import HEARTBEAT_TIMEOUT

__all__ = ["branch_command", "grow_command", "tree_command", "register"]

_STORE_STEPS = click.option("--store-steps", default="none", show_default=True, metavar="none|all|every:N",
                            help="Which steps the store keeps (episodes are always kept).")
_RESULTS = click.option("--results", metavar="DIR", default="_outputs/results", show_default=True,
                        type=click.Path(file_okay=False, path_type=Path),
                        help="Root folder of the per-run results files.")


@click.command("branch", short_help="Branch a child session from a finished one and run it.")
@click.argument("node")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a key of the parent's run document (repeatable). KEY is a dotted path "
                   "(brain.params.alpha, schedule.training.phase_config.worker, agents.learner.muscle."
                   "params.epsilon); VALUE is YAML; x0.5 multiplies the current value; +KEY adds a key.")
@click.option("--episodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Episodes (per worker) of the trained phase of the child.")
@click.option("--steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Steps (all workers) of the trained phase of the child.")
@click.option("--phase", default=None, metavar="NAME",
              help="The phase --episodes/--steps apply to (default: the first train-mode phase).")
@click.option("--no-run", is_flag=True, help="Only write the child's run document.")
@click.option("--output", "-o", default=None, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="Run folder; the child's document goes to its branches/ folder (default: the "
                   "folder of the parent's document when it is a session of a tree, else _outputs).")
@store_option
@_RESULTS
@_STORE_STEPS
@handle_errors
def branch_command(node: str, overrides: tuple[str, ...], episodes: int | None, steps: int | None,
                   phase: str | None, no_run: bool, output: Path | None, store_url: str | None,
                   results: Path, store_steps: str) -> None:
    """Branch a child session from NODE and run it.

    NODE is a finished session in the store: a run instance id (12), a run
    uid (its newest finished instance) or RUN-UID:PHASE (the brains as that
    phase left them). The child inherits the parent's run document, applies
    the overrides, loads every agent's brain from the parent's final
    checkpoint, and is written to DIR/branches/run-<parent uid>_bNN.yaml
    (files sort under their parents; out of the design's DIR/run-*.yaml).
    The store records parent -> child with the overrides. A child is a
    session of its tree, not a run of the design: results, analyze, plot,
    report and status leave it out (--include-branches shows it).
    """
    from xdoe.store import StepPolicy
    from xdoe.tree import branch

    if episodes is not None and steps is not None:
        fail("give --episodes or --steps, not both")
    StepPolicy.parse(store_steps)
    with _progress() as progress:
        out = branch(node, set=overrides, episodes=episodes, steps=steps, phase=phase, run=not no_run,
                     store=store_url, output=output, results=results, store_steps=store_steps,
                     progress=progress)
    changes = ", ".join(f"{a['key']}={a['value']} ({len(a['paths'])} place{'s' * (len(a['paths']) != 1)})"
                        for a in out.applied) or "none"
    click.echo(f"wrote {out.file} (session {out.uid} in tree {out.tree}; overrides: {changes})")
    if out.result is None:
        return
    assessment = out.assessment
    metric = "-" if assessment is None or assessment.metric is None else f"{assessment.metric:.4g}"
    click.echo(f"{out.uid}: {out.result.status} in {out.result.wall_time:.1f} s, {out.result.episodes} "
               f"episodes; metric {metric} ({assessment.reason if assessment else ''})")
    sys.exit(EXIT_OK if out.result.ok else EXIT_FAILED)


@contextmanager
def _progress() -> Iterator[Any]:
    """A transient rich progress bar of the running phase's episodes on a
    terminal (``None`` otherwise)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=Console(stderr=True, emoji=False), transient=True)
    task = bar.add_task("", total=1)

    def update(event: Any) -> None:
        bar.update(task, description=f"{event.run} · {event.phase} ({event.phase_index + 1}/{event.phases})",
                   completed=event.episodes, total=event.episodes_total)

    with bar:
        yield update


@click.command("grow", short_help="Grow a tree of sessions from a session config.")
@click.argument("session_config", metavar="SESSION.yaml", type=click.Path(dir_okay=False, path_type=Path))
@store_option
@_RESULTS
@_STORE_STEPS
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
              help="Run up to N sessions of a round at once in separate processes (at most max_parallel).")
@click.option("--dask", metavar="ADDRESS|local", default=None, help="Run the sessions on a Dask cluster.")
@click.option("--quiet", "-q", is_flag=True, help="Only the final tree line and the best path.")
@handle_errors
def grow_command(session_config: Path, store_url: str | None, results: Path, store_steps: str,
                 jobs: int, dask: str | None, quiet: bool) -> None:
    """Grow a tree of sessions as SESSION.yaml describes.

    From the root, each session trains one segment; the health criterion
    judges it against its parent; a dead session is never extended and the
    next direction is tried from the last healthy one, until the goal or a
    limit. Everything is in the store: run the same command again after an
    interruption and it continues the same tree (nothing runs twice).

    Exit 0 when the goal was reached, 1 when growth stopped without it.
    """
    from xdoe.tree import grow

    open_store_or_exit(store_url).close()  # an unusable store is unusable input: one line, exit 2

    def report(line: str) -> None:
        if not quiet:
            click.echo(line)
            sys.stdout.flush()  # progress, also when piped to a file

    result = grow(session_config, store=store_url, results=results, jobs=jobs, dask=dask,
                  store_steps=store_steps, report=report)
    click.echo(f"tree {result.tree}: {result.status} after {len(result.nodes)} sessions "
               f"({result.ran} run now)")
    parts = []
    for node in result.best:
        metric = "-" if node.metric is None else f"{node.metric:.4g}"
        from xdoe.tree import describe_overrides

        edge = describe_overrides(node.overrides)
        parts.append((f"[{edge}] " if edge else "") + f"{node.run_uid} ({node.health}, {metric})")
    click.echo("best path: " + " → ".join(parts))
    sys.exit(EXIT_OK if result.status == "goal" else EXIT_FAILED)


@click.command("tree", short_help="Show the session trees (or the lineage of runs).")
@click.argument("node", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text",
              show_default=True, help="Output format.")
@click.option("--tree", "tree_uid", metavar="UID", default=None, help="Only this session tree.")
@click.option("--lineage", is_flag=True,
              help="Show the lineage of runs (instances, phases, brain sources) even when the store "
                   "holds session trees.")
@click.option("--experiment", "-e", metavar="UID", default=None, help="Lineage: only the runs of this experiment.")
@click.option("--run", "run_uid", metavar="UID", default=None, help="Lineage: only this run.")
@click.option("--latest", is_flag=True, help="Lineage: only the newest instance of each run version.")
@click.option("--heartbeat-timeout", default=HEARTBEAT_TIMEOUT, show_default=True, metavar="SECONDS",
              type=Number(min=0, infinite=True), help="Lineage: when a running instance counts as interrupted.")
@store_option
@handle_errors
def tree_command(node: str | None, fmt: str, tree_uid: str | None, lineage: bool, experiment: str | None, run_uid: str | None,
                 latest: bool, heartbeat_timeout: float, store_url: str | None) -> None:
    """Show the session trees: each session's health (healthy, dead, goal,
    running), its metric, and the overrides on each edge; with NODE (a run
    uid) only the path from its root to it. NODE may instead be an output
    folder, as the other commands take it: its store (DIR/xrun.sqlite).

    A store without session trees (or --lineage, --experiment, --run) shows
    the lineage instead: runs, instances, phases and where each agent's
    brain came from.
    """
    from xdoe.cli._select import open_store, store_of

    # `xrun tree _outputs`, as `xrun status _outputs` (a name too long for the system: handle_errors)
    if node is not None and Path(node).is_dir():
        store_url, node = store_of(Path(node), store_url), None
    with open_store(store_url) as store:
        trees = store.sessions.session_trees()
        if lineage or experiment or run_uid or latest or not trees:
            if node is not None:
                fail("NODE needs a store with session trees (xrun branch / xrun grow make them)")
            if tree_uid is not None:  # else the lineage of every run was shown as if it were that tree's
                fail(f"no session tree {tree_uid!r}: "
                     + ("--tree shows a session tree, not the lineage (--lineage)" if trees else
                        "the store has no session trees (xrun branch / xrun grow make them)"))
            _lineage(store, experiment, run_uid, latest, heartbeat_timeout, fmt)
            return
        if tree_uid is not None:
            if tree_uid not in {t.uid for t in trees}:
                import difflib

                close = difflib.get_close_matches(tree_uid, [t.uid for t in trees], n=3)
                fail(f"no session tree {tree_uid!r}; "
                     + (f"did you mean: {', '.join(close)}" if close else
                        f"trees: {', '.join(t.uid for t in trees)}"))
            trees = [t for t in trees if t.uid == tree_uid]
        nodes = store.sessions.session_nodes(tree_uid)
        title = f"session trees · {store.url}"
    if node is not None:
        nodes, trees = _path(node, nodes, trees)
        title = f"path to {node}"
    _show(trees, nodes, fmt, title)


def _path(node: str, nodes: list[Any], trees: list[Any]) -> tuple[list[Any], list[Any]]:
    import difflib

    from xdoe.tree import path_to

    uid = node.partition(":")[0]
    matches = [n for n in nodes if n.run_uid == uid or (uid.isdigit() and n.instance_id == int(uid))]
    if not matches:
        close = difflib.get_close_matches(uid, sorted({n.run_uid for n in nodes}), n=3)
        hint = f"did you mean: {', '.join(close)}" if close else "run xrun tree to list them"
        fail(f"no session {uid!r} in the session trees; {hint}", EXIT_INPUT)
    target = matches[-1]
    path = path_to(nodes, target)
    return path, [t for t in trees if t.uid == target.tree]


def _show(trees: list[Any], nodes: list[Any], fmt: str, title: str) -> None:
    from xdoe.tree import render_dot, render_json, render_text

    if fmt == "json":
        click.echo(render_json(trees, nodes))
    elif fmt == "dot":
        click.echo(render_dot(trees, nodes), nl=False)
    else:
        console().print(render_text(trees, nodes, title))


def _lineage(store: Any, experiment: str | None, run_uid: str | None, latest: bool,
             heartbeat_timeout: float, fmt: str) -> None:
    from xdoe.store import render_lineage

    store.views.check_experiment(experiment)
    nodes = store.views.build_lineage(experiment, run=run_uid, latest_only=latest,
                                heartbeat_timeout=heartbeat_timeout)
    if run_uid is not None and not nodes:  # as xrun status --run: a run the store lacks is an error, not "no runs"
        fail(f"no run {run_uid!r} in {store.url}" + (f" (experiment {experiment})" if experiment else ""))
    if fmt == "dot":
        fail("the lineage view has text and json formats; dot is for session trees")
    if fmt == "json":
        import json

        click.echo(json.dumps([asdict(n) for n in nodes], indent=2, default=str))
    else:
        title = f"experiment {experiment}" if experiment else f"store {store.url}"
        console().print(render_lineage(nodes, title))
    if not nodes:
        click.secho("no runs", fg="yellow", err=True)


def register(group: click.Group) -> None:
    """Add ``branch``, ``grow`` and ``tree`` to the ``xrun`` group."""
    for command in (branch_command, grow_command, tree_command):
        group.add_command(command)
