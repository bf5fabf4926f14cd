"""Running the dashboard with uvicorn."""

from __future__ import annotations

from typing import Callable

from xdoe.dashboard._app import create_app
from xdoe.dashboard._settings import Settings

__all__ = ["serve", "dashboard_url"]


def dashboard_url(host: str, port: int, token: str | None = None) -> str:
    """The URL to open (with ``?token=`` when given), IPv6 hosts bracketed."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8050,
          announce: Callable[[str], None] = print) -> None:
    """Serve the dashboard until interrupted (Ctrl-C, SIGTERM).

    ``announce`` receives the URL to open (with the token unless read-only).
    """
    import uvicorn

    app = create_app(settings)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    announce(dashboard_url(host, port, None if settings.read_only else settings.token))
    server.run()
