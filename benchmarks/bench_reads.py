"""Read commands at cluster scale (issue 26.1): each figure beside its target.

Run: ``python benchmarks/bench_reads.py [--only status,analyze,big,dashboard] [--keep DIR]
[--postgres URL] [--pythonpath DIR]``.

* ``status``: ``xrun status DIR`` of an output folder of 10,000 run files
  whose runs all finished (the dummy study's first run file, uid, seed and
  design point changed per run; the store records each file's sha256 as
  ``xrun`` does). Target <= 1 s.
* ``analyze``: ``xrun results``, ``xrun analyze`` and ``xrun report`` of 200
  runs x 5,000 episode rows (1,000,000 rows,
  :func:`xdoe.store.testing.fill_synthetic_campaign`). Targets: results and
  analyze <= 5 s and <= 300 MiB, report <= 2x analyze.
* ``big``: ``xrun results``, ``xrun analyze`` and ``xrun report`` of 10,000
  runs x 10 episode rows (5,000 design points of 2 runs). Targets: results
  and analyze <= 10 s (report: no target; shown beside 2x analyze).
* ``status`` also: ``xrun status RUN`` of one failed run with its traceback
  in a store of 10,000 runs. Target <= 0.3 s (beside ``xrun --version``: the
  interpreter and imports alone).
* ``dashboard``: the campaign page, its effects and pictures fragments of
  2,000 and 10,000 runs (in-process, FastAPI's TestClient): the first request,
  the seconds until the effects table is shown (computed in the background),
  and a reload without new rows. Target <= 1 s.
* ``--postgres URL``: the stores in databases of a PostgreSQL server
  (``scripts/postgres.sh start``; ``url`` prints it) instead of SQLite files.

Every command runs in its own process (``python -m xdoe.cli._xrun``); the
wall time is the median of ``--repeat`` runs, the memory the child's peak
resident set (``ru_maxrss``). The load average is printed: on a shared
machine, figures above the targets with a load above the core count are the
neighbours' doing as much as ours; re-run.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def timed(args: list[str], repeat: int, ok: tuple[int, ...] = ()) -> tuple[float, float, float, str]:
    """Median wall seconds, peak MiB, median CPU seconds (user + system: what
    a loaded machine's neighbours do not inflate much) and the last output of
    ``xrun ARGS``."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "w = time.perf_counter() - t; sys.stderr.write(p.stderr); sys.stdout.write(p.stdout); "
             "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
             "print(f'\\n@@ {w} {u.ru_maxrss} {u.ru_utime + u.ru_stime}'); sys.exit(p.returncode)")
    walls, peaks, cpus, out = [], [], [], ""
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "xdoe.cli._xrun", *args],
                              capture_output=True, text=True)
        if proc.returncode not in (0, *ok):
            raise SystemExit(f"xrun {' '.join(args)} failed: {proc.stderr.strip()[-800:]}")
        out, tail = proc.stdout.rsplit("@@ ", 1)
        wall, kib, cpu = tail.split()
        walls.append(float(wall))
        peaks.append(int(kib) / 1024)
        cpus.append(float(cpu))
    return statistics.median(walls), max(peaks), statistics.median(cpus), out


POSTGRES: str | None = None  # --postgres: the server whose databases hold the stores


def pg_database(server: str, name: str) -> tuple[str, bool]:
    """The URL of database ``name`` on the PostgreSQL server of URL
    ``server`` (``scripts/postgres.sh url``) and whether it had to be created."""
    import psycopg
    from sqlalchemy.engine import make_url

    base = make_url(server)
    plain = base.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    return base.set(database=name).render_as_string(hide_password=False), not exists


def synthetic_store(path: Path, runs: int, episodes: int, postgres: str | None = None) -> str:
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    postgres = postgres or POSTGRES
    if postgres:
        url, new = pg_database(postgres, f"bench_{path.stem.replace('-', '_')}")
    else:
        url, new = f"sqlite:///{path}", not path.exists()
    if new:
        start = time.perf_counter()
        with Store(url) as store:
            fill_synthetic_campaign(store, runs=runs, episodes=episodes)
        print(f"  (built {path.stem}: {runs:,} runs x {episodes:,} episode rows in {time.perf_counter() - start:.0f} s)")
    return url


# -- status --------------------------------------------------------------------------------------

def status_campaign(folder: Path, runs: int, postgres: str | None = None) -> str:
    """``folder/out`` with ``runs`` run files and ``folder/status.sqlite``
    recording one finished instance of each, with the file's sha256."""
    import datetime as _dt

    from xdoe.design.runfiles import generate
    from xdoe.documents._run import load_run_document
    from xdoe.store import Store
    from xdoe.store._json import canonical_json, document_hash

    out, db = folder / "out", folder / f"status-{runs}.sqlite"
    if postgres:
        url, new = pg_database(postgres, f"bench_status_{runs}")
    else:
        url, new = f"sqlite:///{db}", not db.exists()
    if not new and (out / f"run-bench-{runs - 1:05d}.yaml").is_file():
        return url
    start = time.perf_counter()
    if not (folder / "template").is_dir():
        generate(REPO / "experiments" / "dummy.yaml", folder / "template")
    template = sorted((folder / "template").glob("run-*.yaml"))[0]
    text = template.read_text("utf-8")
    _, base = load_run_document(template)
    out.mkdir(parents=True, exist_ok=True)
    rows, instances = [], []
    now = str(_dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None))
    for k in range(runs):
        uid = f"bench-{k:05d}"
        body = (text.replace(f"uid: {base['uid']}\n", f"uid: {uid}\n", 1)
                .replace(f"\nseed: {base['seed']}\n", f"\nseed: {k}\n", 1)
                .replace("  index: 0\n", f"  index: {k // 2}\n", 1)
                .replace("  repetition: 0\n", f"  repetition: {k % 2}\n", 1)
                .replace("experiment_uid: dummy-study\n", "experiment_uid: bench\n", 1))
        path = out / f"run-{uid}.yaml"
        path.write_text(body, "utf-8")
        doc = copy.deepcopy(base)
        doc.update(uid=uid, seed=k, experiment_uid="bench")
        doc["design_point"] = {**doc["design_point"], "index": k // 2, "repetition": k % 2}
        if k < 3:  # the edited template is what the executor would load
            assert load_run_document(path)[1] == doc, "template substitution changed the document"
        rows.append((k + 1, uid, 1, document_hash(doc), canonical_json(doc), k // 2, k % 2, k,
                     json.dumps(doc["design_point"]["levels"], sort_keys=True), now,
                     hashlib.sha256(body.encode("utf-8")).hexdigest()))
        instances.append((k + 1, f"00000000-0000-4000-8000-{k + 1:012d}", k + 1, "bench", 1, now, now,
                          "finished", None, None, now))
    with Store(url) as store, store.database.writer.begin() as conn:
        m = "?" if conn.dialect.paramstyle == "qmark" else "%s"

        def marks(n: int) -> str:
            return ", ".join([m] * n)

        conn.exec_driver_sql(f"INSERT INTO experiment (uid, created) VALUES ({marks(2)})", ("bench", now))
        conn.exec_driver_sql('INSERT INTO run (id, uid, experiment_id, content_hash, document, design_point, '
                             f'repetition, seed, levels, created, file_sha256) VALUES ({marks(11)})', rows)
        conn.exec_driver_sql('INSERT INTO run_instance (id, uuid, run_id, host, pid, start, "end", status, error, '
                             f'traceback, heartbeat) VALUES ({marks(11)})', instances)
    print(f"  (built {runs:,} run files and their store in {time.perf_counter() - start:.0f} s)")
    return url


def bench_status(folder: Path, runs: int, repeat: int, postgres: str | None = None) -> None:
    url = status_campaign(folder, runs, postgres)
    wall, peak, cpu, out = timed(["status", str(folder / "out"), "--store", url], repeat)
    assert f"{runs} runs: {runs} finished" in out, out[-500:]
    print(f"status, {runs:,} runs (every one finished): {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MiB  "
          "(target <= 1 s)")
    # one run with its traceback, in a store of `runs` runs (every 50th failed with a traceback)
    url = synthetic_store(folder / f"reads-{runs}x10.sqlite", runs, 10, postgres)
    wall, peak, cpu, out = timed(["status", "bench-00049", "--store", url], repeat, ok=(1,))
    assert "status: failed" in out and "Traceback" in out, out[-500:]
    floor = timed(["--version"], repeat)
    print(f"status of one run with its traceback, store of {runs:,} runs: {wall:.2f} s wall, {cpu:.2f} s CPU, "
          f"{peak:.0f} MiB  (target <= 0.3 s; `xrun --version` takes {floor[0]:.2f} s wall, {floor[2]:.2f} s CPU)")
    dialect = "sqlalchemy.dialects.postgresql.psycopg" if postgres else "sqlalchemy.dialects.sqlite"
    imports = f"import click, sqlalchemy, {dialect}"
    print(f"  the floor of any status command (medians of {repeat}): `python -c pass` "
          f"{import_cpu('pass', repeat):.2f} s CPU; `{imports}` {import_cpu(imports, repeat):.2f} s CPU; "
          f"with rich.console (the output) {import_cpu(imports + ', rich.console', repeat):.2f} s CPU")


def import_cpu(code: str, repeat: int) -> float:
    """Median CPU seconds (user + system) of ``python -c CODE``: the
    interpreter and the imports every ``xrun status`` needs."""
    import resource

    cpus = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(cpus)


# -- analyze -------------------------------------------------------------------------------------

def bench_analyze(folder: Path, runs: int, episodes: int, repeat: int, commands: tuple[str, ...],
                  target: float) -> None:
    url = synthetic_store(folder / f"reads-{runs}x{episodes}.sqlite", runs, episodes)
    times = {}
    for command in commands:
        args = [command, "--store", url, "-e", "bench"]
        if command == "report":
            args += ["-o", str(folder / "report.html"), "--overwrite"]
        wall, peak, cpu, _ = timed(args, repeat)
        times[command] = wall
        goal = (f"<= {2 * times['analyze']:.1f} s = 2x analyze" if command == "report" and "analyze" in times
                else f"<= {target:.0f} s" + (", <= 300 MiB" if runs * episodes >= 1_000_000 else ""))
        print(f"{command}, {runs:,} runs x {episodes:,} episode rows: {wall:.2f} s wall, {cpu:.2f} s CPU, "
              f"{peak:.0f} MiB  (target {goal})")


# -- dashboard -----------------------------------------------------------------------------------

def bench_dashboard(folder: Path, runs: int, repeat: int, postgres: str | None = None,
                    patience: float = 600.0) -> None:
    """The campaign page and its analysis fragments: the first request (the
    analysis starts in the background above 200 runs), the seconds until
    the effects table is shown, then a reload without new rows (the median
    of ``repeat``: what every later visit costs)."""
    from fastapi.testclient import TestClient

    from xdoe.dashboard import Settings, create_app

    url = synthetic_store(folder / f"reads-{runs}x10.sqlite", runs, 10, postgres)
    settings = Settings(store_url=url, workdir=folder, token="t")
    pages = (("campaign page", "/campaigns/bench"), ("effects fragment", "/fragments/campaigns/bench/effects"),
             ("pictures fragment", "/fragments/campaigns/bench/plots"))
    with TestClient(create_app(settings), base_url=f"http://127.0.0.1:{settings.port}",
                    headers={"X-Xdoe-Token": settings.token}) as client:
        first = {}
        for name, page in pages:
            start = time.perf_counter()
            response = client.get(page)
            first[name] = time.perf_counter() - start
            assert response.status_code == 200, response.status_code
        started = time.perf_counter()
        while 'id="effects-table"' not in client.get(pages[1][1]).text:
            if time.perf_counter() - started > patience:
                print(f"dashboard, {runs:,} runs: the effects table was not shown within {patience:.0f} s")
                return
            time.sleep(1.0)
        ready = time.perf_counter() - started + first["effects fragment"]
        for name, page in pages:
            walls = []
            for _ in range(repeat):
                start = time.perf_counter()
                response = client.get(page)
                walls.append(time.perf_counter() - start)
            shown = 'id="effects-table"' in response.text or 'id="effects-plot"' in response.text
            print(f"dashboard {name}, {runs:,} runs: first {first[name]:.2f} s, reload {statistics.median(walls):.3f} s"
                  + (" (figures shown)" if shown else "") + "  (target <= 1 s)")
        print(f"dashboard, {runs:,} runs: the effects table shown {ready:.1f} s after the first request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="status,analyze,big,dashboard")
    parser.add_argument("--pythonpath", default=None,
                        help="PYTHONPATH of the xrun processes (e.g. a git archive of an older commit's src/, "
                             "to measure before and after on the same stores)")
    parser.add_argument("--runs", type=int, default=10_000, help="runs of status, big and dashboard")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep (and reuse) the stores in")
    parser.add_argument("--postgres", default=None, metavar="URL",
                        help="the stores in databases of this PostgreSQL server (scripts/postgres.sh url)")
    parser.add_argument("--patience", type=float, default=600.0,
                        help="seconds to wait for the dashboard's effects table")
    parser.add_argument("--dashboard-runs", default="2000,10000",
                        help="campaign sizes of the dashboard figures (comma-separated)")
    args = parser.parse_args()
    if args.pythonpath:
        os.environ["PYTHONPATH"] = args.pythonpath
    global POSTGRES
    POSTGRES = args.postgres
    only = set(args.only.split(","))
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-reads-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if "status" in only:
            bench_status(folder, args.runs, args.repeat, args.postgres)
        if "analyze" in only:
            bench_analyze(folder, 200, 5000, args.repeat, ("results", "analyze", "report"), 5.0)
        if "big" in only:
            bench_analyze(folder, args.runs, 10, 1, ("results", "analyze", "report"), 10.0)
        if "dashboard" in only:
            for runs in (int(n) for n in args.dashboard_runs.split(",")):
                bench_dashboard(folder, runs, args.repeat, args.postgres, args.patience)
    print(f"after:  {load()}")


if __name__ == "__main__":
    main()
