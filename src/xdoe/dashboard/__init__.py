"""``xrun dashboard``: a web application to watch and steer campaigns.

Pages: campaigns (runs per status, progress, elapsed time), a campaign (its
runs with levels, status and response; filter, sort, pages; factor effects
when :mod:`xdoe.analysis` is installed), a run (phases, live learning
curves, checkpoints, error and traceback, the run document), compare
(curves of several runs overlaid) and the session tree (lineage graph).
Actions, each needing the token printed at start: start a campaign from a
folder of run documents, stop a running run (it ends interrupted and
resumes later), branch a session (once the session tree exists).

Built on FastAPI, Jinja2, htmx and Plotly's JavaScript bundle, all served by
the app (no CDN); needs ``pip install 'xdoe[dashboard]'``. Every query is in
the dashboard methods of :class:`xdoe.store.Store`.

Python::

    from xdoe.dashboard import Settings, create_app, serve
    serve(Settings(store_url="sqlite:///_outputs/xrun.sqlite"), port=8050)
"""

from __future__ import annotations

from xdoe.dashboard._app import create_app
from xdoe.dashboard._settings import Settings
from xdoe.dashboard._serve import dashboard_url, serve

__all__ = ["create_app", "Settings", "serve", "dashboard_url"]
