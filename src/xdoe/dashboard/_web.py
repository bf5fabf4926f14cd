"""What the routers share: the templates (with their filters), the lazily
opened store and the token check."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from fastapi import HTTPException, Request
from fastapi.templating import Jinja2Templates

from xdoe.dashboard._settings import TOKEN_COOKIE, TOKEN_HEADER, Settings

__all__ = ["templates", "store_of", "require_token", "plotly_js"]

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


templates.env.filters.update(duration=_duration, when=_when, num=_num)


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
    given = (request.cookies.get(TOKEN_COOKIE) or request.headers.get(TOKEN_HEADER)
             or request.query_params.get("token"))
    if not settings.token_ok(given):
        raise HTTPException(403, "this action needs the token printed when the dashboard started "
                                 "(open the URL with ?token=...)")


