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


def _find_document(output_dir: Path | None, document: Path | None) -> Path | None:
    """The experiment document: ``document``, else a YAML file in the
    working directory or ``experiments/`` whose sha256 is the manifest's input."""
    if document is not None:
        return document
    if output_dir is None or not (output_dir / "manifest.json").is_file():
        return None
    try:
        wanted = json.loads((output_dir / "manifest.json").read_text("utf-8")).get("input_sha256")
    except (OSError, ValueError):
        return None
    for folder in (Path.cwd(), Path.cwd() / "experiments", output_dir.parent):
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            if hashlib.sha256(path.read_bytes()).hexdigest() == wanted:
                return path
    return None


def write_report(frame: "pd.DataFrame", output: str | Path, *, response: "Response | None" = None,
                 output_dir: Path | None = None, store_url: str | None = None, experiment: str | None = None,
                 document: Path | None = None, seed: int = 0, overwrite: bool = False,
                 hint: str = "choose another output") -> Path:
    """Write the report of the campaign in ``frame`` (:func:`xdoe.results.load`)
    to ``output``.

    Args:
        output_dir: the xgen output folder (design table, status of runs not
            started, and the experiment document found by its sha256).
        store_url, experiment: where the status and run documents come from.
        document: the experiment document (default: found via the manifest).
        overwrite: replace an existing ``output`` (else it is refused;
            ``hint``: what to do instead, appended to the refusal).

    The file appears only when complete (:func:`xdoe._files.write_atomically`).

    Raises:
        InputError: ``output`` exists and ``overwrite`` is false (checked
            first, and again when the file is moved into place).
    """
    from xdoe.analysis._effects import analyze
    from xdoe.analysis._format import fmt_levels, fmt_num, sections
    from xdoe.analysis._response import Response, run_table
    from xdoe.analysis.plots import plot_curves, plot_design, plot_effects, plot_laydown
    from xdoe.store import Store
    from xdoe.store._status import campaign_status, summarize

    target = Path(output)
    if not overwrite:
        refuse_existing(target, hint)
    response = response or Response()
    result = analyze(frame, response, seed=seed)
    table, _phase = run_table(frame, response)
    experiments = sorted({str(e) for e in frame["experiment"].dropna().unique()})
    title = f"xdoe report: {', '.join(experiments) or 'campaign'}"
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p class=note>written {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC · response "
             f"{html.escape(result.response)} · {result.runs} runs</p>"]

    # 1 document
    doc_path = _find_document(output_dir, document)
    parts.append('<h2 id="document">Experiment document</h2>')
    if doc_path is not None:
        parts.append(f"<p class=note>{html.escape(str(doc_path))}</p><pre>{html.escape(doc_path.read_text('utf-8'))}</pre>")
    else:
        parts.append("<p class=note>not found (give the output folder with its manifest.json, or --document)</p>")

    # 2 design
    from xdoe.analysis._effects import design_points

    points = design_points(table)
    parts.append('<h2 id="design">Design</h2>')
    if output_dir is not None and (output_dir / "manifest.json").is_file():
        manifest = json.loads((output_dir / "manifest.json").read_text("utf-8"))
        info = manifest.get("design", {})
        parts.append(f"<p>method <b>{html.escape(str(manifest.get('method')))}</b>: {html.escape(str(info.get('reason', '')))}; "
                     f"{info.get('points')} design points x {info.get('repetitions')} repetitions = {info.get('runs')} runs</p>")
    parts.append(_table(["design point", "factor levels", "runs recorded"],
                        [[p.index, fmt_levels(p.levels), p.n] for p in sorted(points, key=lambda p: p.index)]))

    # 3 status
    parts.append('<h2 id="status">Campaign status</h2>')
    with Store(store_url, create=False) as store:
        status = campaign_status(store, output_dir, None if output_dir is not None else experiment)
        runs = store.runs(experiment if experiment else (experiments[0] if len(experiments) == 1 else None))
    parts.append(f"<p>{html.escape(summarize(status.counts))}</p>")
    parts.append(_table(["run", "design point", "repetition", "status", "reason"],
                        [[r.run, r.design_point, r.repetition, r.status, r.reason or ""] for r in status.runs]))

    # 4 results
    parts.append('<h2 id="results">Results</h2>')
    parts.append(_table(["", "design point", "factor levels", "runs", "mean", "95 % CI"],
                        [["*" if i == 0 else "", p.index, fmt_levels(p.levels), p.n, fmt_num(p.mean),
                          f"[{fmt_num(p.ci_low)}, {fmt_num(p.ci_high)}]"] for i, p in enumerate(points)]))

    # 5 effects, 6 aggregates
    secs = sections(result)
    parts.append('<h2 id="effects">Factor effects</h2>')
    for title_, headers, rows in secs[:-1]:
        parts.append(f"<h3>{html.escape(title_)}</h3>" + _table(headers, rows))
    parts.append('<h2 id="aggregates">RL-grade aggregates</h2>')
    parts.append(f"<h3>{html.escape(secs[-1][0])}</h3>" + _table(secs[-1][1], secs[-1][2]))
    parts += [f"<p class=warn>warning: {html.escape(w)}</p>" for w in result.warnings]

    # 7 plots
    parts.append('<h2 id="plots">Plots</h2>')
    parts.append(_image(lambda p: plot_curves(frame, p, seed=seed),
                        "Learning curves (first phase, on environment steps; test phase as points)"))
    if result.factors:
        parts.append(_image(lambda p: plot_effects(result, frame, p, response=response), "Main effects"))
    if doc_path is not None:
        from xdoe.design import prepare

        _exp, design, _runs = prepare(doc_path)
        if design.factors:
            parts.append(_image(lambda p: plot_design(design, p), "Design: pairwise projections"))
    if runs:
        first = min(runs, key=lambda r: (r.design_point is None, r.design_point or 0, r.repetition or 0, r.uid))
        parts.append(_image(lambda p: plot_laydown(first.document, p), f"Lay-down of run {first.uid}"))

    text = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="generator" '
            f'content="{GENERATOR}"><title>{html.escape(title)}</title><style>{_CSS}</style></head><body>'
            + "\n".join(parts) + "</body></html>\n")
    return write_atomically(target, lambda tmp: tmp.write_text(text, "utf-8"), overwrite=overwrite, hint=hint)


