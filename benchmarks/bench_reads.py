"""Read commands at cluster scale (issue 26.1): each figure beside its target.

Run: ``python benchmarks/bench_reads.py [--only status,analyze,big,dashboard] [--keep DIR]``.

* ``status``: ``xrun status DIR`` of an output folder of 10,000 run files
  whose runs all finished (the dummy study's first run file, uid, seed and
  design point changed per run; the store records each file's sha256 as
  ``xrun`` does). Target <= 1 s.
* ``analyze``: ``xrun results``, ``xrun analyze`` and ``xrun report`` of 200
  runs x 5,000 episode rows (1,000,000 rows,
  :func:`xdoe.store.testing.fill_synthetic_campaign`). Targets: results and
  analyze <= 5 s and <= 300 MiB, report <= 2x analyze.
* ``big``: ``xrun results`` and ``xrun analyze`` of 10,000 runs x 10 episode
  rows (5,000 design points of 2 runs). Target <= 10 s.
* ``dashboard``: the campaign page and its effects fragment of 10,000 runs
  (in-process, FastAPI's TestClient). Target <= 1 s.

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


def timed(args: list[str], repeat: int) -> tuple[float, float, float, str]:
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
        if proc.returncode not in (0,):
            raise SystemExit(f"xrun {' '.join(args)} failed: {proc.stderr.strip()[-800:]}")
        out, tail = proc.stdout.rsplit("@@ ", 1)
        wall, kib, cpu = tail.split()
        walls.append(float(wall))
        peaks.append(int(kib) / 1024)
        cpus.append(float(cpu))
    return statistics.median(walls), max(peaks), statistics.median(cpus), out


def synthetic_store(path: Path, runs: int, episodes: int) -> str:
    from xdoe.store import Store
    from xdoe.store.testing import fill_synthetic_campaign

    url = f"sqlite:///{path}"
    if not path.exists():
        start = time.perf_counter()
        with Store(url) as store:
            fill_synthetic_campaign(store, runs=runs, episodes=episodes)
        print(f"  (built {path.name}: {runs:,} runs x {episodes:,} episode rows in {time.perf_counter() - start:.0f} s)")
    return url


# -- status --------------------------------------------------------------------------------------

def status_campaign(folder: Path, runs: int) -> str:
    """``folder/out`` with ``runs`` run files and ``folder/status.sqlite``
    recording one finished instance of each, with the file's sha256."""
    import datetime as _dt

    from xdoe.design import generate
    from xdoe.documents._run import load_run_document
    from xdoe.store import Store
    from xdoe.store._json import canonical_json, document_hash

    out, db = folder / "out", folder / f"status-{runs}.sqlite"
    url = f"sqlite:///{db}"
    if db.exists():
        return url
    start = time.perf_counter()
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
    with Store(url) as store, store._writer.begin() as conn:
        conn.exec_driver_sql("INSERT INTO experiment (uid, created) VALUES (?, ?)", ("bench", now))
        conn.exec_driver_sql('INSERT INTO run (id, uid, experiment_id, content_hash, document, design_point, '
                             'repetition, seed, levels, created, file_sha256) VALUES '
                             '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', rows)
        conn.exec_driver_sql('INSERT INTO run_instance (id, uuid, run_id, host, pid, start, "end", status, error, '
                             'traceback, heartbeat) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', instances)
    print(f"  (built {runs:,} run files and their store in {time.perf_counter() - start:.0f} s)")
    return url


def bench_status(folder: Path, runs: int, repeat: int) -> None:
    url = status_campaign(folder, runs)
    wall, peak, cpu, out = timed(["status", str(folder / "out"), "--store", url], repeat)
    assert f"{runs} runs: {runs} finished" in out, out[-500:]
    print(f"status, {runs:,} runs (every one finished): {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MiB  "
          "(target <= 1 s)")


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

def bench_dashboard(folder: Path, runs: int, repeat: int) -> None:
    from fastapi.testclient import TestClient

    from xdoe.dashboard import Settings, create_app

    url = synthetic_store(folder / f"reads-{runs}x10.sqlite", runs, 10)
    settings = Settings(store_url=url, workdir=folder, token="t")
    with TestClient(create_app(settings), base_url=f"http://127.0.0.1:{settings.port}",
                    headers={"X-Xdoe-Token": settings.token}) as client:
        for name, page in (("campaign page", "/campaigns/bench"),
                           ("campaign effects fragment", "/fragments/campaigns/bench/effects")):
            walls = []
            for _ in range(repeat):
                start = time.perf_counter()
                response = client.get(page)
                walls.append(time.perf_counter() - start)
                assert response.status_code == 200, response.status_code
            shown = "effects shown" if "eta" in response.text.lower() else "a note instead of the effects"
            print(f"dashboard {name}, {runs:,} runs: {statistics.median(walls):.2f} s ({shown})  (target <= 1 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="status,analyze,big,dashboard")
    parser.add_argument("--runs", type=int, default=10_000, help="runs of status, big and dashboard")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep (and reuse) the stores in")
    args = parser.parse_args()
    only = set(args.only.split(","))
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-reads-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if "status" in only:
            bench_status(folder, args.runs, args.repeat)
        if "analyze" in only:
            bench_analyze(folder, 200, 5000, args.repeat, ("results", "analyze", "report"), 5.0)
        if "big" in only:
            bench_analyze(folder, args.runs, 10, 1, ("results", "analyze"), 10.0)
        if "dashboard" in only:
            bench_dashboard(folder, args.runs, args.repeat)
    print(f"after:  {load()}")


if __name__ == "__main__":
    main()
