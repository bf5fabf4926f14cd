"""A campaign's pictures on its page (beside the factor-effects table of
:func:`xdoe.dashboard._pages.effects_fragment`): the main-effects plot
(:func:`xdoe.analysis.plots.plot_effects` of :func:`xdoe.analysis.analyze`)
and the learning curves by a factor (:func:`xdoe.analysis.plots.plot_curves`),
drawn by those functions (no second statistic here) from
:func:`xdoe.results.load`, as PNGs.

The episode table, the analysis and each picture are kept until a run of
the store finishes (the key is the set of finished instances).
"""

from __future__ import annotations

import importlib.util
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from xdoe.dashboard._web import store_of, templates

__all__ = ["router", "campaign_answer"]

router = APIRouter()

#: answers (tables, analyses, pictures) kept per server
_KEEP = 24
_lock = threading.Lock()


def _cache(request: Request) -> "OrderedDict[Any, Any]":
    state = request.app.state
    if not hasattr(state, "answers"):
        state.answers = OrderedDict()
    return state.answers  # type: ignore[no-any-return]


def _remember(request: Request, key: Any, make: Any) -> Any:
    cache = _cache(request)
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


def campaign_answer(request: Request, experiment: str) -> tuple[Any, Any, str | None, Any]:
    """``(frame, analysis, note, key)`` of ``experiment``: the runs' scores
    (:func:`xdoe.analysis.load_scores`, default response) and its analysis, or ``None``s and a note saying why not (no analysis
    package, too many runs, no finished run, an analysis error)."""
    from xdoe.dashboard._pages import EFFECTS_MAX_RUNS

    store = store_of(request)
    if importlib.util.find_spec("xdoe.analysis") is None or importlib.util.find_spec("statsmodels") is None:
        return None, None, "Factor effects appear here when the analysis package (xrun analyze) is installed.", None
    if store.experiment_run_count(experiment) > EFFECTS_MAX_RUNS:
        return None, None, (f"More than {EFFECTS_MAX_RUNS} runs: run `xrun analyze` for the factor effects "
                            "(the page does not read every episode)."), None
    key = (experiment, frozenset(store.finished_instances().values()))

    def make() -> tuple[Any, Any, str | None]:
        try:
            from xdoe.analysis import Response, analyze, load_scores

            frame = load_scores(store, Response(), experiment)  # one row per run, aggregated by the database
            return frame, analyze(frame), None
        except Exception as exc:  # noqa: BLE001 - shown on the page, the page still works
            return None, None, f"analysis unavailable: {' '.join(str(exc).split()) or type(exc).__name__}"

    frame, analysis, note = _remember(request, ("answer", key), make)
    return frame, analysis, note, key


def _png(draw: Any) -> bytes:
    with tempfile.TemporaryDirectory(prefix="xdoe-dashboard-") as tmp:
        return Path(draw(Path(tmp) / "plot.png")).read_bytes()


def _picture(request: Request, experiment: str, kind: str, by: str | None = None) -> Response:
    from xdoe.errors import InputError

    frame, analysis, note, key = campaign_answer(request, experiment)
    if analysis is None:
        raise HTTPException(404, note or "no analysis")

    def make() -> bytes | str:
        from xdoe.analysis import plots

        try:
            if kind == "effects":
                return _png(lambda path: plots.plot_effects(analysis, frame, path))
            from xdoe.results import load

            return _png(lambda path: plots.plot_curves(load(store_of(request), experiment), path, by=by))
        except InputError as exc:
            return str(exc)

    data = _remember(request, (kind, by, key), make)
    if isinstance(data, str):
        raise HTTPException(400, data)
    return Response(data, media_type="image/png", headers={"Cache-Control": "no-cache"})


@router.get("/campaigns/{experiment}/plots/effects.png", include_in_schema=False)
def effects_png(request: Request, experiment: str) -> Response:
    """The main-effects plot of ``xrun plot effects``."""
    return _picture(request, experiment, "effects")


@router.get("/campaigns/{experiment}/plots/curves.png", include_in_schema=False)
def curves_png(request: Request, experiment: str, by: str | None = None) -> Response:
    """The learning curves of ``xrun plot curves --by FACTOR``."""
    return _picture(request, experiment, "curves", by or None)


@router.get("/fragments/campaigns/{experiment}/plots", response_class=HTMLResponse)
def plots_fragment(request: Request, experiment: str) -> HTMLResponse:
    """The main-effects plot and the learning curves by factor (a choice of
    factor, the strongest first), or a note saying why not."""
    from xdoe.dashboard._pages import _context

    _, analysis, note, key = campaign_answer(request, experiment)
    factors = [f.name for f in analysis.factors] if analysis is not None else []
    return templates.TemplateResponse(request, "_plots.html", _context(
        request, analysis=analysis, note=note, experiment=experiment, factors=factors,
        by=factors[0] if factors else "", version=_version(key)))


def _version(key: Any) -> str:
    """A short name of the answer's state, so a browser reloads a picture once it changes."""
    import hashlib

    ids = sorted(key[1]) if key is not None else []
    return hashlib.sha256(repr(ids).encode()).hexdigest()[:12]


@router.get("/fragments/campaigns/{experiment}/curves", response_class=HTMLResponse)
def curves_fragment(request: Request, experiment: str, by: str = "") -> HTMLResponse:
    """The learning-curves picture by factor ``by`` (empty: by design point)."""
    from xdoe.dashboard._pages import _context

    _, _, _, key = campaign_answer(request, experiment)
    return templates.TemplateResponse(request, "_curves_picture.html", _context(
        request, experiment=experiment, by=by, version=_version(key)))
