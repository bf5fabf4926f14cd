"""Helpers for tests and benchmarks that need a fresh, empty store.

Not imported by :mod:`xdoe.store`; the test suite and ``benchmarks/`` use it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

__all__ = [
    "POSTGRES_URL_VAR", "START_SERVERS_VAR", "KEEP_SERVERS_VAR", "postgres_admin_url", "postgres_server",
    "servers_may_start", "temporary_schema",
]

#: Environment variable naming an existing PostgreSQL server (admin URL) for tests.
POSTGRES_URL_VAR = "XDOE_TEST_POSTGRES_URL"
#: Tests and benchmarks start servers (PostgreSQL, SLURM) only when this is ``1``.
START_SERVERS_VAR = "XDOE_START_SERVERS"
#: ``1`` leaves the servers a test session started running at its end.
KEEP_SERVERS_VAR = "XDOE_KEEP_SERVERS"
_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "postgres.sh"


def servers_may_start() -> bool:
    """Whether tests may start servers: ``$XDOE_START_SERVERS`` is ``1``."""
    return os.environ.get(START_SERVERS_VAR) == "1"


def _script(command: str, timeout: float) -> subprocess.CompletedProcess:
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run([bash, str(_SCRIPT), command], capture_output=True, text=True, timeout=timeout)


def postgres_admin_url(start_server: bool = True) -> tuple[str | None, str]:
    """An admin URL of a PostgreSQL server for tests, or ``None`` and the reason.

    ``$XDOE_TEST_POSTGRES_URL`` when set; else, when ``start_server`` is true,
    ``$XDOE_START_SERVERS`` is ``1``, we are root, ``scripts/postgres.sh``
    exists (source checkout) and the server binaries are installed, the
    throwaway server that script starts (left running: see
    :func:`postgres_server` for one that is stopped again).
    """
    url = os.environ.get(POSTGRES_URL_VAR)
    if url:
        return url, f"${POSTGRES_URL_VAR}"
    if not start_server:
        return None, f"${POSTGRES_URL_VAR} is not set"
    if not servers_may_start():
        return None, f"${POSTGRES_URL_VAR} is not set and ${START_SERVERS_VAR} is not 1 (tests start no server)"
    if not _SCRIPT.is_file():
        return None, f"${POSTGRES_URL_VAR} is not set and {_SCRIPT} does not exist"
    if os.geteuid() != 0:
        return None, f"${POSTGRES_URL_VAR} is not set and not root (cannot start {_SCRIPT.name})"
    if not (Path("/usr/lib/postgresql").is_dir() or os.environ.get("XDOE_PG_BIN")):
        return None, (f"${POSTGRES_URL_VAR} is not set and no PostgreSQL server binaries "
                      f"(run `{_SCRIPT} start` to install them)")
    done = _script("start", 300)
    if done.returncode != 0:
        return None, f"{_SCRIPT.name} start failed: {done.stderr.strip()[-500:]}"
    return _script("url", 30).stdout.strip(), f"{_SCRIPT.name} start"


@contextmanager
def postgres_server() -> Iterator[tuple[str | None, str]]:
    """:func:`postgres_admin_url` for a test session: yields ``(url, reason)``
    and, when it started the server itself (it was not running before),
    stops it at exit unless ``$XDOE_KEEP_SERVERS`` is ``1``."""
    was_running = (not os.environ.get(POSTGRES_URL_VAR) and servers_may_start() and _SCRIPT.is_file()
                   and _script("status", 60).returncode == 0)
    url, reason = postgres_admin_url()
    started = url is not None and reason.endswith(" start") and not was_running
    try:
        yield url, reason
    finally:
        if started and os.environ.get(KEEP_SERVERS_VAR) != "1":
            _script("stop", 300)


@contextmanager
def temporary_schema(admin_url: str, prefix: str = "xdoe_test") -> Iterator[str]:
    """Create a uniquely named PostgreSQL schema, yield a URL whose connections
    use it (``search_path``), drop it with everything in it afterwards.

    A schema is 20 times faster to create and drop than a database, and just
    as separate for the store's tables.
    """
    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
        try:
            url = make_url(admin_url).update_query_dict({"options": f"-csearch_path={name}"})
            yield url.render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql("SET lock_timeout = '30s'")
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        admin.dispose()
