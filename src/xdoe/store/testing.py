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

__all__ = ["POSTGRES_URL_VAR", "postgres_admin_url", "temporary_schema"]

#: Environment variable naming an existing PostgreSQL server (admin URL) for tests.
POSTGRES_URL_VAR = "XDOE_TEST_POSTGRES_URL"
_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "postgres.sh"


def postgres_admin_url(start_server: bool = True) -> tuple[str | None, str]:
    """An admin URL of a PostgreSQL server for tests, or ``None`` and the reason.

    ``$XDOE_TEST_POSTGRES_URL`` when set; else, when ``start_server`` is true,
    we are root, ``scripts/postgres.sh`` exists (source checkout) and the
    server binaries are installed, the throwaway server that script starts.
    """
    url = os.environ.get(POSTGRES_URL_VAR)
    if url:
        return url, f"${POSTGRES_URL_VAR}"
    if not start_server:
        return None, f"${POSTGRES_URL_VAR} is not set"
    if not _SCRIPT.is_file():
        return None, f"${POSTGRES_URL_VAR} is not set and {_SCRIPT} does not exist"
    if os.geteuid() != 0:
        return None, f"${POSTGRES_URL_VAR} is not set and not root (cannot start {_SCRIPT.name})"
    if not (Path("/usr/lib/postgresql").is_dir() or os.environ.get("XDOE_PG_BIN")):
        return None, (f"${POSTGRES_URL_VAR} is not set and no PostgreSQL server binaries "
                      f"(run `{_SCRIPT} start` to install them)")
    bash = shutil.which("bash") or "/bin/bash"
    done = subprocess.run([bash, str(_SCRIPT), "start"], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return None, f"{_SCRIPT.name} start failed: {done.stderr.strip()[-500:]}"
    out = subprocess.run([bash, str(_SCRIPT), "url"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip(), f"{_SCRIPT.name} start"


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
