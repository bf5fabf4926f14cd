"""``xrun report``: one self-contained HTML file answering the design.

Sections: the experiment document, the design table, the campaign status,
the results per design point, the factor effects, the RL-grade aggregates
and every plot (learning curves, main effects, design projections, the
lay-down of the first run), images embedded as base64 PNG: the file needs no
network and no other file to be viewed.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdoe._files import refuse_existing, write_atomically

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.analysis._response import Response

__all__ = ["write_report", "SECTIONS", "GENERATOR"]

#: section ids, in order (tests check every one is there)
SECTIONS = ("document", "design", "status", "results", "effects", "aggregates", "plots")
GENERATOR = "xdoe xrun report"
_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.4em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f2f4f7}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.85em}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}.warn{color:#9a5b00}.note{color:#666}"""


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _image(draw: Any, alt: str) -> str:
    """Run ``draw(path)`` into a temporary PNG and embed it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "figure.png"
        draw(path)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"><figcaption>{html.escape(alt)}</figcaption></figure>'


def _manifest(output_dir: Path | None, experiment: str | None) -> Path | None:
    """The manifest of ``experiment`` in the xgen output folder (its only
    one's without ``experiment``), ``None`` when there is none."""
    from xdoe.design.runfiles import folder_experiments

    if output_dir is None:
        return None
    found = folder_experiments(output_dir)
    if experiment is None:
        return next(iter(found.values())).manifest if len(found) == 1 else None
    return found[experiment].manifest if experiment in found else None


def shown_path(path: str | Path) -> str:
    """``path`` as the report shows it: relative to the working directory it
    was made in (no absolute local path), or its file name when it is on
    another drive."""
    try:
        return os.path.relpath(path, os.getcwd())
    except ValueError:  # another drive (Windows)
        return Path(path).name


def _find_document(manifest: Path | None, document: Path | None) -> Path | None:
    """The experiment document: ``document``, else a YAML file in the
    working directory or ``experiments/`` whose sha256 is the manifest's input."""
    if document is not None:
        return document
    if manifest is None:
        return None
    try:
        wanted = json.loads(manifest.read_text("utf-8")).get("input_sha256")
    except (OSError, ValueError):
        return None
    for folder in (Path.cwd(), Path.cwd() / "experiments", manifest.parent.parent):
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            if hashlib.sha256(path.read_bytes()).hexdigest() == wanted:
                return path
    return None


def write_report(frame: "pd.DataFrame | None", output: str | Path, *, response: "Response | None" = None,
                 output_dir: Path | None = None, store_url: str | None = None, experiment: str | None = None,
                 document: Path | None = None, seed: int = 0, statistic: str | None = None, agent: str | None = None,
                 overwrite: bool = False, hint: str = "choose another output",
                 scores: "pd.DataFrame | None" = None, include_branches: bool = False,
                 goal: str | None = None) -> Path:
    """Write the report of the campaign in ``frame`` (:func:`xdoe.results.load`)
    to ``output``; with ``frame`` ``None`` the campaign of ``experiment`` in
    the store at ``store_url`` (``scores`` are then required).

    Args:
        output_dir: the xgen output folder (design table, status of runs not
            started, and the experiment document found by its sha256).
        store_url, experiment: where the status and run documents come from.
        document: the experiment document (default: found via the manifest).
        statistic, agent, seed, goal: as :func:`xdoe.analysis.analyze` (``statistic``
            ``None``: an optuna design's ``stat``, else IQM; without
            ``agent``, a game of several agents gets one analysis per agent;
            ``goal`` ``None``: the design's declared direction, else maximize).
        overwrite: replace an existing ``output`` (else it is refused;
            ``hint``: what to do instead, appended to the refusal).
        scores: the runs' scores for ``response`` (:func:`xdoe.analysis.load_scores`,
            the same runs as ``frame``): the analysis and the results tables
            use them (the same numbers, without the episodes). The learning
            curves always come from the store (:func:`xdoe.analysis.plots.plot_curves`,
            with ``include_branches``; more than 8 design points grouped by
            the factor this report's analysis ranks first): memory grows
            with the runs, not the episodes.

    The file appears only when complete (:func:`xdoe._files.write_atomically`).

    Raises:
        InputError: ``output`` exists and ``overwrite`` is false (checked
            first, and again when the file is moved into place).
        ValueError: neither ``frame`` nor ``scores``.
    """
    from xdoe.analysis._branches import split_branches
    from xdoe.analysis._effects import analyze
    from xdoe.analysis._format import fmt_levels, fmt_num, sections
    from xdoe.analysis._response import Response, response_agents, run_table
    from xdoe.analysis.plots import plot_curves, plot_design, plot_effects, plot_laydown
    from xdoe.results import experiment_label
    from xdoe.store import Store

    target = Path(output)
    if not overwrite:
        refuse_existing(target, hint)

    response = response or Response()
    from xdoe.analysis._design_info import read_design

    if frame is None and scores is None:
        raise ValueError("write_report needs the episode table or the scores")
    answer = frame if scores is None else scores
    design, _branches = split_branches(answer)  # branches (include_branches): own rows of the aggregates
    agents = response_agents(design, response, agent)
    doe_design = read_design(output_dir, experiment)
    with Store(store_url, read_only=True) as store:  # an optuna design's answer reads it, as xrun analyze
        results = [analyze(answer, response, statistic=statistic, agent=a, seed=seed, design=doe_design, goal=goal,
                           store=store) for a in agents]
    result = results[0]
    experiments = sorted({str(e) for e in design["experiment"].dropna().unique()})
    experiment = experiment or (experiments[0] if len(experiments) == 1 else None)
    label = experiment_label(design)
    title = f"xdoe report: {label}"
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p class=note>{html.escape(label)} · response {html.escape(result.response)} · "
             f"{result.runs} runs · design points ranked by {html.escape(result.statistic)} over runs"
             f"{html.escape(', ' + result.goal.note() if result.goal.minimize else '')} · "
             f"written {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC</p>"]
    manifest_path = _manifest(output_dir, experiment)

    # 1 document
    doc_path = _find_document(manifest_path, document)
    parts.append('<h2 id="document">Experiment document</h2>')
    if doc_path is not None:
        parts.append(f"<p class=note>{html.escape(shown_path(doc_path))}</p><pre>{html.escape(doc_path.read_text('utf-8'))}</pre>")
    else:
        parts.append("<p class=note>not found (give the output folder with its manifest.json, or --document)</p>")
    if manifest_path is not None:  # xgen generate exp.yaml KEY=VALUE: the study is the file with these
        recorded = json.loads(manifest_path.read_text("utf-8")).get("overrides")
        if recorded:
            import shlex

            from xdoe.documents import override_specs

            parts.append("<p class=note>generated with the overrides "
                         f"<code>{html.escape(shlex.join(override_specs(recorded)))}</code></p>")

    # 2 design
    points = result.points
    parts.append('<h2 id="design">Design</h2>')
    if manifest_path is not None:
        manifest = json.loads(manifest_path.read_text("utf-8"))
        info = manifest.get("design", {})
        parts.append(f"<p>method <b>{html.escape(str(manifest.get('method')))}</b>: {html.escape(str(info.get('reason', '')))}; "
                     f"{info.get('points')} design points x {info.get('repetitions')} repetitions = {info.get('runs')} runs</p>")
    parts.append(_table(["design point", "factor levels", "runs recorded"],
                        [[p.index, fmt_levels(p.levels), p.n] for p in sorted(points, key=lambda p: p.index)]))

    # 3 status
    parts.append('<h2 id="status">Campaign status</h2>')
    with Store(store_url, read_only=True) as store:
        status = store.views.campaign_status(output_dir, experiment)
        # the lay-down of the first stored run (one document read, not every run's)
        laydown = next(((r.run, doc) for r in sorted(
            (r for r in status.runs if r.content_hash is not None),
            key=lambda r: (r.design_point is None, r.design_point or 0, r.repetition or 0, r.run))
            if (doc := store.sessions.run_document(r.run, r.content_hash)) is not None), None)
    parts.append(f"<p>{html.escape(status.summary)}</p>")
    parts.append(_table(["run", "design point", "repetition", "status", "reason"],
                        [[r.run, r.design_point, r.repetition, r.status, r.reason or ""] for r in status.runs]))

    # 4 results: one score per run (the unit of replication)
    parts.append('<h2 id="results">Results: one score per run</h2>')
    for a in results:
        table, _phase = run_table(design, response, a.agent)
        factors = [c for c in table.columns if c not in ("run", "design_point", "repetition", "y")]
        parts.append(f"<h3>{html.escape(a.title())}</h3>")
        columns = table[["run", "design_point", "repetition", *factors, "y"]]
        parts.append(_table(["run", "design point", "repetition", *factors, "score"],
                            [[run, point, repetition, *map(fmt_num, rest)]  # rows as tuples: iterrows takes ~1 ms a row
                             for run, point, repetition, *rest in columns.itertuples(index=False, name=None)]))

    # 5 effects, 6 aggregates
    parts.append('<h2 id="effects">Factor effects</h2>')
    for a in results:
        for title_, headers, rows in sections(a)[:-1]:
            parts.append(f"<h3>{html.escape(title_)}</h3>" + (_table(headers, rows) if rows else ""))
    parts.append('<h2 id="aggregates">Design points ranked</h2>')
    for a in results:
        title_, headers, rows = sections(a)[-1]
        parts.append(f"<h3>{html.escape(a.title())}: {html.escape(title_)}</h3>" + _table(headers, rows))
        parts += [f"<p class=warn>warning: {html.escape(w)}</p>" for w in a.warnings]

    adaptive = result.adaptive  # an optuna design's best trial, importances (xdoe.analysis.adaptive_answer)
    if adaptive is not None:
        from xdoe.analysis._optuna import optuna_text, plot_optimization

        parts.append('<h2 id="optuna">Adaptive design (Optuna)</h2>'
                     + "".join(f"<p>{html.escape(line)}</p>" for line in optuna_text(adaptive).splitlines()))
        parts.append(_image(lambda p: plot_optimization(adaptive, p), "Each trial's response and the best so far"))

    # 7 plots
    parts.append('<h2 id="plots">Plots</h2>')

    def curves(path: Path) -> Path:
        # more than 8 design points: grouped by the factor the effects above rank first (one analysis)
        strongest = result.factors[0].name if len(results) == 1 and result.factors else None
        with Store(store_url, read_only=True) as store:
            return plot_curves(store, path, experiment=experiment, include_branches=include_branches, seed=seed,
                               strongest=lambda: strongest)

    parts.append(_image(curves, "Learning curves (first phase, on environment steps; test phase as points)"))
    for a in results:
        if a.factors:
            parts.append(_image(lambda p, a=a: plot_effects(a, answer, p, response=response),
                                f"Main effects ({a.title()})"))
        from xdoe.analysis._doe import doe_plot_title, plot_doe

        drawn = doe_plot_title(a)
        if drawn is not None:
            parts.append(_image(lambda p, a=a: plot_doe(a, p, experiment=label), f"{drawn} ({a.title()})"))
    if doc_path is not None:
        from xdoe.design.runfiles import prepare

        _exp, design, _runs = prepare(doc_path)
        if design.factors:
            parts.append(_image(lambda p: plot_design(design, p), "Design: pairwise projections"))
    if laydown is not None:
        uid, doc = laydown
        parts.append(_image(lambda p: plot_laydown(doc, p), f"Lay-down of run {uid}"))

    text = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="generator" '
            f'content="{GENERATOR}"><title>{html.escape(title)}</title><style>{_CSS}</style></head><body>'
            + "\n".join(parts) + "</body></html>\n")
    return write_atomically(target, lambda tmp: tmp.write_text(text, "utf-8"), overwrite=overwrite, hint=hint)


