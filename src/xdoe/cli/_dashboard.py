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
              help="Folder of run documents (e.g. _outputs) offered by 'Start a campaign'; its "
                   "design.csv tables (two levels down) count a design's runs never started as missing. "
                   "Run files started from the browser must lie in it (links resolved). Default: the "
                   "working directory. Must lie inside it.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Keep 127.0.0.1 and use an SSH tunnel from elsewhere.")
@click.option("--port", type=click.IntRange(1, 65535), default=8050, show_default=True,
              help="Port to listen on.")
@click.option("--read-only", is_flag=True, help="Show only: no start, stop or branch action.")
@click.option("--public", is_flag=True,
              help="With --read-only: pages readable without the token (anyone who reaches the port "
                   "reads every run document and traceback). Default: every page needs the token.")
@click.option("--store-file", "store_file", metavar="PATH", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Read the store URL from the first line of this file (keep it chmod 600), so a "
                   "password never appears in ps; or set $XRUN_STORE.")
@click.option("--allow-host", "allow_hosts", metavar="NAME[:PORT]", multiple=True,
              help="A further Host header to answer (a name that reaches this server, e.g. behind a "
                   "proxy); 127.0.0.1, localhost and --host always are. Repeatable.")
@click.option("--results", "results", metavar="DIR", default="_outputs/results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Results root given to campaigns started from the dashboard.")
@handle_errors
def dashboard_command(store_url: str | None, runs_dir: Path | None, host: str, port: int,
                      read_only: bool, public: bool, store_file: Path | None, allow_hosts: tuple[str, ...],
                      results: Path) -> None:
    """Serve a web dashboard to watch and steer campaigns.

    Pages: campaigns, runs with live learning curves, comparisons and the
    lineage; actions: start a campaign from a folder of run documents, stop
    a running run.

    Prints the URL to open; it carries a token that every page and action
    needs (as Jupyter does; --read-only --public: pages without it). Actions
    are taken only from the dashboard's own pages (same origin). The store
    URL comes from --store, --store-file or $XRUN_STORE (the last two keep a
    password out of ps). It never creates a store (campaigns it starts do).
    Stop with Ctrl-C. Needs the dashboard extra.
    """
    try:
        from xdoe.dashboard import Settings, serve
    except ImportError as exc:
        from xdoe._extras import install_command

        fail(f"xrun dashboard needs the dashboard extra: {install_command('dashboard')} "
             f"(missing module {exc.name})")
    from xdoe.errors import NoStoreError
    from xdoe.store import Store

    if public and not read_only:
        fail("--public needs --read-only: actions always need the token")
    if store_file is not None:
        store_url = _read_store_file(store_file, given=store_url)
    settings = Settings(store_url=store_url, runs_dir=runs_dir, read_only=read_only, public=public,
                        results=results, host=host, port=port, allowed_hosts=allow_hosts)
    try:  # fail now, with a clear message, on a bad URL; never create a store
        with Store(store_url, create=False) as store:
            shown = store.url
    except NoStoreError as exc:
        click.echo(f"note: {exc}; it appears when a campaign starts")
        from xdoe.store import mask_url, resolve_url

        shown = mask_url(resolve_url(store_url))
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.secho(f"warning: listening on {host}: pages and actions need the token"
                    + (" (reads do not: --public)" if public else "")
                    + ", but plain HTTP carries it unencrypted; prefer 127.0.0.1 and an SSH tunnel",
                    fg="yellow", err=True)

    def announce(url: str) -> None:
        click.echo(f"xrun dashboard of {shown}")
        click.echo(f"open {url}" + ("  (read-only)" if read_only else "")
                   + ("  (public: no token needed to read)" if public else ""), nl=True)

    serve(settings, announce=announce)


def _read_store_file(path: Path, *, given: str | None) -> str:
    """The store URL on the first line of ``path`` (``--store-file``)."""
    import os

    if given is not None and os.environ.get("XRUN_STORE") != given:
        fail("give --store or --store-file, not both")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"--store-file {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        fail(f"--store-file {path}: holds no store URL")
    return lines[0]
