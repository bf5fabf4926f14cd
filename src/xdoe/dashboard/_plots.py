"""A campaign's analysis on its page: the factor-effects table (as ``xrun
analyze``), the main-effects plot (:func:`xdoe.analysis.plots.plot_effects`),
the picture matched to the design (:func:`xdoe.analysis.plots.plot_doe`, as
``xrun plot design``: half-normal, contour or mu*-sigma) and the learning curves by a factor (:func:`xdoe.analysis.plots.plot_curves`),
drawn by those functions (no second statistic here) from the runs' scores
computed by the database (:func:`xdoe.analysis.load_scores`); the curves
read the store as ``xrun plot curves`` does.

An answer (scores and analyses) is computed once per state of the store
(:meth:`store.views.data_marker <xdoe.store.views._views.Views.data_marker>`: a reload without new rows costs a few
small queries) in a daemon thread: the page waits for it up to
:data:`WAIT_SECONDS` (a campaign of at most :data:`SYNC_RUNS` runs: until it
is ready), else shows the answer of the previous state, marked as being
updated, or a note, and asks again every 2 s. One computation per campaign
at a time; pictures are kept with their answer.
"""

from __future__ import annotations

import importlib.util
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from xdoe.dashboard._web import store_of, templates

__all__ = ["router", "Answer", "campaign_answer", "SYNC_RUNS", "WAIT_SECONDS"]

router = APIRouter()

#: answers (analyses, pictures) kept per server
_KEEP = 24
#: a campaign of at most this many runs is answered when ready (as before issue 26)
SYNC_RUNS = 200
#: how long a larger campaign's page waits for a new answer before it shows the previous one
WAIT_SECONDS = 0.5
_lock = threading.RLock()  # reentrant: a done callback may run in the thread that adds it


@dataclass
class Answer:
    """The analysis of one campaign in one state of the store: the runs'
    ``frame`` (:func:`xdoe.analysis.load_scores`, default response), one
    analysis per agent (``analyses``: :func:`xdoe.analysis.response_agents`,
    as ``xrun analyze``), the one the pictures draw (``single``: ``None``
    for a game of several agents) or a ``note`` saying why not; an optuna
    design's best trial, importances and Pareto front (``adaptive``:
    :func:`xdoe.analysis.adaptive_answer`, as ``xrun analyze``); ``key``
    names the state, ``runs`` and ``seconds`` what it took."""

    key: Any
    frame: Any = None
    analyses: list[Any] = field(default_factory=list)
    single: Any = None
    adaptive: dict[str, Any] | None = None
    note: str | None = None
    plot_note: str | None = None
    runs: int = 0
    seconds: float = 0.0
    finished_at: float = 0.0


@dataclass
class Pending:
    """What a page shows while a campaign's answer is computed: the
    ``previous`` answer of this campaign (an older state) if any, the
    number of ``runs`` and when it ``started`` (``time.monotonic``)."""

    previous: Answer | None
    runs: int
    started: float


def _state(request: Request) -> Any:
    state = request.app.state
    with _lock:
        if not hasattr(state, "answers"):
            state.answers = OrderedDict()  # key -> Answer, bytes or str (pictures)
            state.latest = {}  # experiment -> its newest Answer
            state.computing = {}  # experiment -> (key, Future, started)
    return state


def _start(store: Any, experiment: str, key: Any, runs: int) -> "Future[Answer]":
    """Compute an answer in a daemon thread (a server stopped meanwhile
    does not wait for it)."""
    future: Future[Answer] = Future()

    def work() -> None:
        try:
            future.set_result(_compute(store, experiment, key, runs))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            future.set_exception(exc)

    threading.Thread(target=work, name=f"xdoe-analysis-{experiment}", daemon=True).start()
    return future


def _remember(request: Request, key: Any, make: Any) -> Any:
    cache = _state(request).answers
    with _lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = make()
    with _lock:
        cache[key] = value
        while len(cache) > _KEEP:
            cache.popitem(last=False)
    return value


def _compute(store: Any, experiment: str, key: Any, runs: int) -> Answer:
    """The answer of ``experiment`` (run in the background thread)."""
    started = time.monotonic()
    answer = Answer(key, runs=runs)
    try:
        from xdoe.analysis import Response, analyze, load_scores, response_agents
        from xdoe.errors import InputError

        frame = load_scores(store, Response(), experiment)  # one row per run, aggregated by the database
        answer.frame = frame
        # a game of several agents: one analysis each, never their average (as xrun analyze)
        agents = response_agents(frame, Response())
        # store: an optuna design's best trial and front (Analysis.adaptive), as xrun analyze gives them
        answer.analyses = [analyze(frame, agent=a, store=store) for a in agents]
        answer.adaptive = answer.analyses[0].adaptive
        if agents == [None]:
            answer.single = answer.analyses[0]
        else:
            try:  # the pictures draw one analysis: say why not, as xrun plot does
                answer.single = analyze(frame)
            except InputError as exc:
                answer.plot_note = f"analysis unavailable: {' '.join(str(exc).split())}"
    except Exception as exc:  # noqa: BLE001 - shown on the page, the page still works
        answer.note = f"analysis unavailable: {' '.join(str(exc).split()) or type(exc).__name__}"
        answer.frame, answer.analyses, answer.single = None, [], None
    answer.seconds = time.monotonic() - started
    answer.finished_at = time.time()
    return answer


def campaign_answer(request: Request, experiment: str, *, wait: float | None = None) -> Answer | Pending:
    """The :class:`Answer` of ``experiment`` in the store's current state,
    or :class:`Pending` when it is still being computed after ``wait``
    seconds (default: until ready for at most :data:`SYNC_RUNS` runs, else
    :data:`WAIT_SECONDS`). An answer without analysis says why in ``note``
    (no analysis package, no episode, an analysis error)."""
    store = store_of(request)
    if importlib.util.find_spec("xdoe.analysis") is None or importlib.util.find_spec("statsmodels") is None:
        return Answer(None, note="Factor effects appear here when the analysis package (xrun analyze) is installed.")
    state = _state(request)
    key = (experiment, store.views.data_marker())
    with _lock:
        found = state.answers.get(("answer", key))
        if found is not None:
            state.answers.move_to_end(("answer", key))
            return found  # type: ignore[no-any-return]
    runs = store.views.experiment_run_count(experiment)
    if wait is None and runs > SYNC_RUNS:
        wait = WAIT_SECONDS
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        with _lock:
            job = state.computing.get(experiment)
            if job is None or (job[1].done() and job[0] != key):  # one computation per campaign at a time
                future = _start(store, experiment, key, runs)
                job = state.computing[experiment] = (key, future, time.monotonic())
                future.add_done_callback(lambda done, e=experiment: _keep(state, e, done))
        job_key, future, started = job
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            answer = future.result(timeout=left)
        except FutureTimeout:
            return Pending(state.latest.get(experiment), runs, started)
        if job_key == key:
            return answer
        if deadline is not None and time.monotonic() >= deadline:  # an older state's answer
            return Pending(answer, runs, started)


def _keep(state: Any, experiment: str, done: "Future[Answer]") -> None:
    """Keep a finished computation's answer (by its key, and as the campaign's latest)."""
    if done.cancelled() or done.exception() is not None:
        return
    answer = done.result()
    with _lock:
        state.answers[("answer", answer.key)] = answer
        while len(state.answers) > _KEEP:
            state.answers.popitem(last=False)
        state.latest[experiment] = answer


def _png(draw: Any) -> bytes:
    with tempfile.TemporaryDirectory(prefix="xdoe-dashboard-") as tmp:
        return Path(draw(Path(tmp) / "plot.png")).read_bytes()


def _picture(request: Request, experiment: str, kind: str, by: str | None = None) -> Response:
    from xdoe.errors import InputError

    answer = campaign_answer(request, experiment)
    if isinstance(answer, Pending):
        answer = answer.previous  # the picture of the figures the page shows
    if answer is None or answer.single is None:
        raise HTTPException(404, (answer.note or answer.plot_note) if answer else "no analysis yet")
    analysis, frame = answer.single, answer.frame

    def make() -> bytes | str:
        from xdoe.analysis import plots

        try:
            if kind == "effects":
                return _png(lambda path: plots.plot_effects(analysis, frame, path))
            if kind == "design":
                if plots.doe_plot_title(analysis) is None:
                    return "this design's analysis has no picture (xrun plot design)"
                return _png(lambda path: plots.plot_doe(analysis, path, experiment=experiment))
            return _png(lambda path: plots.plot_curves(store_of(request), path, experiment=experiment, by=by))
        except InputError as exc:
            return str(exc)

    data = _remember(request, (kind, by, answer.key), make)
    if isinstance(data, str):
        raise HTTPException(400, data)
    return Response(data, media_type="image/png", headers={"Cache-Control": "no-cache"})


@router.get("/campaigns/{experiment}/plots/effects.png", include_in_schema=False)
def effects_png(request: Request, experiment: str) -> Response:
    """The main-effects plot of ``xrun plot effects``."""
    return _picture(request, experiment, "effects")


@router.get("/campaigns/{experiment}/plots/design.png", include_in_schema=False)
def design_png(request: Request, experiment: str) -> Response:
    """The picture matched to the design of ``xrun plot design``: half-normal
    plot (two-level), contour of the fitted surface with its stationary point
    (response surface) or Morris mu*-sigma."""
    return _picture(request, experiment, "design")


@router.get("/campaigns/{experiment}/plots/curves.png", include_in_schema=False)
def curves_png(request: Request, experiment: str, by: str | None = None) -> Response:
    """The learning curves of ``xrun plot curves --by FACTOR``."""
    return _picture(request, experiment, "curves", by or None)


@router.get("/api/campaigns/{experiment}/analysis")
def analysis_json(request: Request, experiment: str) -> Any:
    """The campaign's analysis as ``xrun analyze --format json`` gives it
    (:meth:`xdoe.analysis.Analysis.to_dict`; a game of several agents:
    ``{"experiment", "response", "agents": {name: ...}}``), from the answer
    the page shows: 404 with the reason when there is none (no episodes, no
    analysis package, an analysis error), 503 while the first is computed."""
    import json

    from fastapi.responses import JSONResponse

    from xdoe.analysis import render

    found = campaign_answer(request, experiment)
    answer = found.previous if isinstance(found, Pending) else found
    if answer is None:
        raise HTTPException(503, "computing the analysis (as xrun analyze); ask again", headers={"Retry-After": "2"})
    if not answer.analyses:
        raise HTTPException(404, answer.note or "no analysis")
    one = answer.analyses[0] if len(answer.analyses) == 1 and answer.analyses[0].agent is None else None
    data = json.loads(render(one if one is not None else answer.analyses, "json"))
    if answer.adaptive is not None:  # as xrun analyze --format json adds it
        data["optuna"] = answer.adaptive
    return JSONResponse(data)


@router.get("/fragments/campaigns/{experiment}/effects", response_class=HTMLResponse)
def effects_fragment(request: Request, experiment: str) -> HTMLResponse:
    """The factor-effects summary of ``xrun analyze`` (:func:`xdoe.analysis.analyze`
    on :func:`xdoe.analysis.load_scores`, one per agent of a game), or a note;
    an analysis error is shown, not raised."""
    return _fragment(request, experiment, "_effects.html", "effects")


@router.get("/fragments/campaigns/{experiment}/plots", response_class=HTMLResponse)
def plots_fragment(request: Request, experiment: str) -> HTMLResponse:
    """The main-effects plot, the design's picture (half-normal, contour,
    mu*-sigma) when it has one, and the learning curves by factor (a choice of
    factor, the strongest first), or a note saying why not."""
    return _fragment(request, experiment, "_plots.html", "plots")


def _fragment(request: Request, experiment: str, template: str, part: str) -> HTMLResponse:
    from xdoe.dashboard._pages import _context

    found = campaign_answer(request, experiment)
    answer = found.previous if isinstance(found, Pending) else found
    pending = None
    if isinstance(found, Pending):
        pending = (f"computing the analysis of {found.runs:,} runs (as xrun analyze), "
                   f"started {time.monotonic() - found.started:.0f} s ago"
                   + ("; the figures below are those of the store before its latest rows" if answer else "…"))
    if answer is None:
        analyses, analysis, note = [], None, pending
    else:
        analyses, analysis = answer.analyses, answer.single
        note = answer.note if part == "effects" else (answer.note or answer.plot_note)
    factors = [f.name for f in analysis.factors] if analysis is not None else []
    from xdoe.analysis import sections
    from xdoe.analysis.plots import doe_plot_title

    design_plot = doe_plot_title(analysis) if analysis is not None and part == "plots" else None

    # the tables of xrun analyze, section by section (one model each, its method in the title);
    # the design points are the campaign page's own table
    tables = [sections(a)[:-1] for a in analyses] if part == "effects" else []
    return templates.TemplateResponse(request, template, _context(
        request, analyses=analyses, tables=tables, analysis=analysis, note=note, pending=pending, part=part,
        experiment=experiment, factors=factors, by=factors[0] if factors else "", design_plot=design_plot,
        version=_version(answer.key if answer is not None else None)))


def _version(key: Any) -> str:
    """A short name of the answer's state, so a browser reloads a picture once it changes."""
    import hashlib

    return hashlib.sha256(repr(key).encode()).hexdigest()[:12]


@router.get("/fragments/campaigns/{experiment}/curves", response_class=HTMLResponse)
def curves_fragment(request: Request, experiment: str, by: str = "") -> HTMLResponse:
    """The learning-curves picture by factor ``by`` (empty: by design point)."""
    from xdoe.dashboard._pages import _context

    found = campaign_answer(request, experiment)
    answer = found.previous if isinstance(found, Pending) else found
    return templates.TemplateResponse(request, "_curves_picture.html", _context(
        request, experiment=experiment, by=by, version=_version(answer.key if answer is not None else None)))
