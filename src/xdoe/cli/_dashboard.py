"""``xrun dashboard``: serve the web dashboard (package :mod:`xdoe.dashboard`,
imported only when the command runs: the core install stays light)."""

from __future__ import annotations

from pathlib import Path

import click

from xdoe.cli._common import fail, handle_errors, store_option

__all__ = ["dashboard_command"]


@click.command("dashboard")
@store_option
@click.option("--runs", "runs_dir", metavar="DIR", default=None,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder of run documents (e.g. _outputs) offered by 'Start a campaign'; "
                   "default: the working directory. Must lie inside it.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Keep 127.0.0.1 and use an SSH tunnel from elsewhere.")
@click.option("--port", type=click.IntRange(1, 65535), default=8050, show_default=True,
              help="Port to listen on.")
@click.option("--read-only", is_flag=True, help="Show only: no start, stop or branch action.")
@click.option("--results", "results", metavar="DIR", default="_outputs/results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Results root given to campaigns started from the dashboard.")
@handle_errors
def dashboard_command(store_url: str | None, runs_dir: Path | None, host: str, port: int,
                      read_only: bool, results: Path) -> None:
    """Serve a web dashboard to watch and steer campaigns.

    Pages: campaigns, runs with live learning curves, comparisons and the
    lineage; actions: start a campaign from a folder of run documents, stop
    a running run.

    Prints the URL to open; it carries a token that every action needs (as
    Jupyter does). It never creates a store (campaigns it starts do). Stop
    with Ctrl-C. Needs: pip install 'xdoe[dashboard]'.
    """
    try:
        from xdoe.dashboard import Settings, serve
    except ImportError as exc:
        fail(f"xrun dashboard needs the dashboard extra: pip install 'xdoe[dashboard]' "
             f"(missing module {exc.name})")
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    settings = Settings(store_url=store_url, runs_dir=runs_dir, read_only=read_only, results=results)
    try:  # fail now, with a clear message, on a bad URL; never create a store
        with Store(store_url, create=False) as store:
            shown = store.url
    except NoStoreError as exc:
        click.echo(f"note: {exc}; it appears when a campaign starts")
        from xdoe.store._engine import mask_url, resolve_url

        shown = mask_url(resolve_url(store_url))
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.secho(f"warning: listening on {host}: anyone who reaches it can read the store; "
                    "actions still need the token", fg="yellow", err=True)

    def announce(url: str) -> None:
        click.echo(f"xrun dashboard of {shown}")
        click.echo(f"open {url}" + ("  (read-only)" if read_only else ""), nl=True)

    serve(settings, host=host, port=port, announce=announce)
