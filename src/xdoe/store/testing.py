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
from typing import TYPE_CHECKING, Callable

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

if TYPE_CHECKING:
    from xdoe.store._store import Store

__all__ = [
    "POSTGRES_URL_VAR", "START_SERVERS_VAR", "KEEP_SERVERS_VAR", "postgres_admin_url", "postgres_server",
    "servers_may_start", "temporary_schema", "fill_synthetic_campaign",
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


def fill_synthetic_campaign(store: "Store", *, runs: int = 10_000, episodes: int = 1000,
                            experiment: str = "bench", seed: int = 0, batch: int = 250_000,
                            progress: "Callable[[int], None] | None" = None) -> dict[str, int]:
    """Fill ``store`` with a synthetic campaign for benchmarks: ``runs`` runs
    (three factors, levels in ``run.levels``), one instance each (mostly
    finished; every 50th failed with a traceback, every 97th interrupted,
    every 499th running with a fresh heartbeat), a training phase of 90 %
    and a test phase of 10 % of ``episodes`` episode rows each, with noisy
    rising learning curves from ``numpy.random.default_rng(seed)``.

    Rows go in with the driver's ``executemany`` in batches of ``batch``
    (about 10 M episode rows in a minute on SQLite). ``progress`` receives
    the number of episode rows written so far.

    Returns:
        counts: ``{"runs", "episodes"}``.
    """
    import datetime as _dt
    import json
    import os
    import socket

    import numpy as np

    from xdoe.store._json import canonical_json, document_hash

    rng = np.random.default_rng(seed)
    now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    host, pid = socket.gethostname(), os.getpid()
    n_train = max(1, int(episodes * 0.9))
    n_test = max(1, episodes - n_train)
    written = 0
    with store.database.writer.begin() as conn:
        mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"

        def many(table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
            if rows:
                quoted = ", ".join(f'"{c}"' for c in columns)
                conn.exec_driver_sql(f"INSERT INTO {table} ({quoted}) VALUES "
                                     f"({', '.join([mark] * len(columns))})", rows)

        many("experiment", ("uid", "created"), [(experiment, str(now))])
        exp_id = conn.exec_driver_sql(f"SELECT id FROM experiment WHERE uid = {mark}",
                                      (experiment,)).scalar_one()
        first_run = int(conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM run").scalar_one()) + 1
        first_inst = int(conn.exec_driver_sql(
            "SELECT coalesce(max(id), 0) FROM run_instance").scalar_one()) + 1
        first_phase = int(conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM phase").scalar_one()) + 1
        run_rows, inst_rows, phase_rows = [], [], []
        for k in range(runs):
            j = k // 2  # the design point: its two repetitions share its levels
            levels = {"alpha": [0.05, 0.1, 0.5][j % 3], "gamma": [0.9, 0.99][(j // 3) % 2],
                      "epsilon": round(0.01 + 0.29 * ((j * 7919) % 1000) / 1000, 4)}
            doc = {"uid": f"{experiment}-{k:05d}", "experiment_uid": experiment, "seed": k,
                   "design_point": {"index": k // 2, "repetition": k % 2, "levels": levels},
                   "schedule": []}
            run_rows.append((first_run + k, doc["uid"], exp_id, document_hash(doc), canonical_json(doc),
                             k // 2, k % 2, k, json.dumps(levels, sort_keys=True), str(now)))
            status = ("running" if k % 499 == 498 else "failed" if k % 50 == 49
                      else "interrupted" if k % 97 == 96 else "finished")
            start = now - _dt.timedelta(seconds=runs - k + 60)
            end = None if status == "running" else start + _dt.timedelta(seconds=30)
            error = "RuntimeError: synthetic failure" if status == "failed" else None
            tb = "Traceback (most recent call last):\n  ...\nRuntimeError: synthetic failure" if error else None
            inst_rows.append((first_inst + k, f"00000000-0000-4000-8000-{first_inst + k:012d}",
                              first_run + k, host, pid, str(start), end and str(end), status, error,
                              tb, str(now) if status == "running" else str(end)))
            for index, (name, mode, n) in enumerate((("training", "train", n_train),
                                                     ("testing", "test", n_test))):
                phase_rows.append((first_phase + 2 * k + index, first_inst + k, index, name, mode,
                                   json.dumps({"episodes": n, "worker": 1}),
                                   "running" if status == "running" and index == 0 else
                                   ("finished" if status != "running" else "running"), str(start),
                                   end and str(end)))
        many("run", ("id", "uid", "experiment_id", "content_hash", "document", "design_point",
                     "repetition", "seed", "levels", "created"), run_rows)
        many("run_instance", ("id", "uuid", "run_id", "host", "pid", "start", "end", "status",
                              "error", "traceback", "heartbeat"), inst_rows)
        many("phase", ("id", "instance_id", "index", "name", "mode", "config", "status", "start",
                       "end"), phase_rows)
        rows: list[tuple] = []
        curve_train = -200 + 200 * (1 - np.exp(-np.arange(n_train) / (n_train / 5)))
        for k in range(runs):
            noise = rng.normal(0, 15, n_train + n_test)
            skill = 1.0 + 0.3 * (k % 3)
            train = curve_train * (1 / skill) + noise[:n_train]
            test = np.full(n_test, curve_train[-1] / skill) + noise[n_train:] / 3
            for index, values in enumerate((train, test)):
                phase_id = first_phase + 2 * k + index
                rows.extend((phase_id, 0, e, "learner", 30, float(v), float(v), 0.01)
                            for e, v in enumerate(values))
            if len(rows) >= batch:
                many("episode", ("phase_id", "worker", "episode", "agent", "steps", "reward",
                                 "objective", "wall_time"), rows)
                written += len(rows)
                rows = []
                if progress is not None:
                    progress(written)
        many("episode", ("phase_id", "worker", "episode", "agent", "steps", "reward", "objective",
                         "wall_time"), rows)
        written += len(rows)
    return {"runs": runs, "episodes": written}
