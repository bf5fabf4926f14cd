"""What the routers share: the templates (with their filters), the lazily
opened store and the token check."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from fastapi import HTTPException, Request
from fastapi.templating import Jinja2Templates

from xdoe.dashboard._settings import Settings

__all__ = ["templates", "store_of", "require_token", "plotly_js", "resume_note"]

_HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(_HERE / "templates"))


def plotly_js() -> Path:
    """The minified Plotly bundle shipped inside the ``plotly`` package."""
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _when(value: _dt.datetime | None) -> str:
    return "–" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _num(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _readable(value: Any) -> str:
    """A factor level as people read it (:func:`xdoe.results.readable`)."""
    from xdoe.results import readable

    shown = readable(value)
    return "–" if shown is None else str(shown)


def resume_note(view: Any) -> str:
    """Where a stopped run would continue (:mod:`xdoe.execution._resume`):
    a phase with a checkpoint of its own continues from the newest one;
    one without restarts from its first episode. ``view``: a
    :class:`xdoe.store.RunView` of a running instance."""
    current = next((p for p in view.phases if p.status == "running"), None)
    if current is None:
        return "Finished phases are not run again."
    saved = [c for c in view.checkpoints if c.phase == current.name and c.episode is not None]
    where = f"phase {current.index} {current.name!r}"
    if saved:
        return (f"{where} continues from its newest checkpoint (episode {max(c.episode for c in saved)}); "
                "finished phases are not run again.")
    return (f"{where} has no checkpoint: it will restart from its first episode "
            f"({current.progress} done so far are run again; phase_config.checkpoint_every "
            "lets a phase resume where it stopped).")


templates.env.filters.update(duration=_duration, when=_when, num=_num, readable=_readable,
                             resume_note=resume_note)


def store_of(request: Request) -> Any:
    """The store, opened on first use and never created: the dashboard only
    reads (runs it starts create it, as ``xrun experiment-start`` does).

    Raises:
        HTTPException: 404 while there is no store at the URL yet.
    """
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    state = request.app.state
    with state.store_lock:
        if state.store is None:
            try:
                state.store = Store(state.settings.store_url, create=False)
            except NoStoreError:
                raise HTTPException(404, f"no store yet at {state.store_url}: start a campaign "
                                         "(here or with xrun experiment-start)") from None
        return state.store


def require_token(request: Request) -> None:
    """Refuse a write action (403) in read-only mode or without the token
    (cookie, ``X-Xdoe-Token`` header or ``token`` query parameter)."""
    settings: Settings = request.app.state.settings
    if settings.read_only:
        raise HTTPException(403, "the dashboard is read-only (--read-only)")
    from xdoe.dashboard._security import given_token

    if not settings.token_ok(given_token(request)):
        raise HTTPException(403, "this action needs the token printed when the dashboard started "
                                 "(open the URL with ?token=...)")


