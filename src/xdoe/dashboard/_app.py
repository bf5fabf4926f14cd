"""The application factory: one FastAPI app over one store (opened on first
use, never created; see :func:`xdoe.dashboard._web.store_of`).

Every page is server-rendered with Jinja2; htmx (vendored, ``static/htmx.min.js``)
refreshes tables in place; curves are drawn with the Plotly bundle that the
``plotly`` package ships, served from this app (no CDN). Every request
passes :func:`xdoe.dashboard._security.guard` (Host header, token, same
origin for actions, security headers).
"""

from __future__ import annotations

import os
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from xdoe.dashboard._security import guard
from xdoe.dashboard._settings import Settings
from xdoe.dashboard._web import plotly_js

__all__ = ["create_app"]

_HERE = Path(__file__).parent


def create_app(settings: Settings | None = None) -> FastAPI:
    """The dashboard application for ``settings``."""
    from xdoe.dashboard._actions import router as actions
    from xdoe.dashboard._data import router as data
    from xdoe.dashboard._design import Designs
    from xdoe.dashboard._launch import Launcher
    from xdoe.dashboard._pages import router as pages
    from xdoe.dashboard._plots import router as plots
    from xdoe.store import mask_url, resolve_url

    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            app.state.launcher.close()
            if app.state.store is not None:
                app.state.store.close()

    app = FastAPI(title="xdoe dashboard", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.settings = settings
    app.state.store = None  # opened by store_of on first use
    app.state.store_lock = threading.Lock()
    app.state.store_url = mask_url(resolve_url(settings.store_url))
    app.state.launcher = Launcher(settings)
    app.state.designs = Designs(settings.runs_dir or settings.workdir)
    app.state.responses = {}  # finished instance id -> response (never changes)
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly_bundle() -> FileResponse:
        return FileResponse(plotly_js(), media_type="text/javascript",
                            headers={"Cache-Control": "max-age=86400"})

    app.middleware("http")(guard)  # Host, token, origin, content type; security headers

    app.include_router(pages)
    app.include_router(plots)
    app.include_router(data)
    app.include_router(actions)
    app.state.pid = os.getpid()
    return app
