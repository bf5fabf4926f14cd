"""Running the dashboard with uvicorn."""

from __future__ import annotations

from typing import Callable

from xdoe.dashboard._app import create_app
from xdoe.dashboard._settings import WILDCARD_HOSTS, Settings

__all__ = ["serve", "dashboard_url"]


def dashboard_url(host: str, port: int, token: str | None = None) -> str:
    """The URL to open (with ``?token=`` when given), IPv6 hosts bracketed."""
    if host in WILDCARD_HOSTS:  # every interface: the machine's name reaches it
        import socket

        host = socket.gethostname()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(settings: Settings, host: str | None = None, port: int | None = None,
          announce: Callable[[str], None] = print) -> None:
    """Serve the dashboard until interrupted (Ctrl-C, SIGTERM) on
    ``host``/``port`` (default: the settings'; they also decide which Host
    headers are answered).

    ``announce`` receives the URL to open (with the token unless public).
    """
    import dataclasses

    import uvicorn

    settings = dataclasses.replace(settings, host=settings.host if host is None else host,
                                   port=settings.port if port is None else port)
    app = create_app(settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning",
                            access_log=False, server_header=False)
    server = uvicorn.Server(config)
    announce(dashboard_url(settings.host, settings.port, None if settings.public else settings.token))
    server.run()
