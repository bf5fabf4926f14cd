"""Speed and memory of ``xrun export`` (:func:`xdoe.store.export_episodes`).

Builds stores with ``--small`` (default 100,000) and ``--rows`` (default
1,000,000) episode rows — runs, instances and phases recorded by the real
recorder (``--runs`` runs of an experiment with three factors, two phases
each), episode rows bulk-inserted directly — then exports each to CSV and to
Parquet in a fresh child process and prints, per export: rows, seconds,
rows per second and the child's peak RSS (``ru_maxrss``, and the maximum of
psutil samples every 10 ms). Flat memory means the 1,000,000-row peak is
about the 100,000-row one. Target: 1,000,000 rows in under 30 s.

Usage: ``python benchmarks/bench_export.py [--rows N] [--small N] [--runs R] [--store-dir DIR]``
(``--url URL`` exports from an existing store instead, e.g. PostgreSQL.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from xdoe.store import Store
url, path = sys.argv[1], sys.argv[2]
with Store(url) as store:
    t = time.perf_counter()
    r = store.views.export_episodes(path, "bench")
    dt = time.perf_counter() - t
print(json.dumps({"rows": r.rows, "seconds": dt,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build(url: str, rows: int, runs: int, results: Path) -> float:
    from sqlalchemy import insert

    from xdoe.store import Episode, Store

    started = time.perf_counter()
    per_phase = rows // (runs * 2)
    with Store(url) as store:
        phase_ids = []
        for k in range(runs):
            doc = {"uid": f"bench-{k:04d}", "experiment_uid": "bench", "seed": 1000 + k,
                   "design_point": {"index": k, "repetition": 0,
                                    "levels": {"alpha": 0.1 * (k % 5), "agents": ["learner"],
                                               "size": k % 3}},
                   "schedule": []}
            rec = store.recorder(doc, results_root=results)
            rec.start()
            for index, (name, mode) in enumerate((("training", "train"), ("testing", "test"))):
                rec.phase_started(index, name, mode, {"worker": 2})
                phase_ids.append(rec._phase_id)
                rec.phase_finished()
            rec.finish("finished")
        done = 0
        with store.database.engine.begin() as conn:
            for i, pid in enumerate(phase_ids):
                n = per_phase if i < len(phase_ids) - 1 else rows - done
                batch = [{"phase_id": pid, "worker": e % 2, "episode": e // 2, "agent": "learner",
                          "steps": 200, "reward": -0.5 * e, "objective": -0.5 * e,
                          "wall_time": 0.0123, "extras": None} for e in range(n)]
                conn.execute(insert(Episode), batch)
                done += n
    return time.perf_counter() - started


def export(url: str, path: Path) -> dict:
    import psutil

    proc = subprocess.Popen([sys.executable, "-c", CHILD, url, str(path)], stdout=subprocess.PIPE,
                            text=True)
    peak = 0
    watched = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.01)
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"export child failed ({proc.returncode})")
    figures = json.loads(out.strip().splitlines()[-1])
    figures["psutil_peak_mb"] = peak / 2**20
    figures["size_mb"] = path.stat().st_size / 2**20
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--store-dir", type=Path, default=None)
    parser.add_argument("--url", default=None, help="export from this existing store (experiment 'bench')")
    args = parser.parse_args()
    work = Path(args.store_dir or tempfile.mkdtemp(prefix="xdoe-bench-export-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.2f}; work folder {work}")
    stores = []
    if args.url:
        stores.append(("given", args.url))
    else:
        for rows in (args.small, args.rows):
            url = f"sqlite:///{work / f'bench-{rows}.sqlite'}"
            if not Path(url[len('sqlite:///'):]).exists():
                seconds = build(url, rows, args.runs, work / "results")
                print(f"built a store with {rows:,} episode rows in {seconds:.1f} s")
            stores.append((f"{rows:,}", url))
    print(f"{'store rows':>12} {'format':>8} {'rows':>10} {'seconds':>8} {'rows/s':>10} "
          f"{'maxrss MB':>10} {'psutil MB':>10} {'file MB':>8}")
    for label, url in stores:
        for suffix in (".csv", ".parquet"):
            f = export(url, work / f"export-{label.replace(',', '')}{suffix}")
            print(f"{label:>12} {suffix[1:]:>8} {f['rows']:>10,} {f['seconds']:>8.2f} "
                  f"{f['rows'] / f['seconds']:>10,.0f} {f['maxrss_mb']:>10.1f} "
                  f"{f['psutil_peak_mb']:>10.1f} {f['size_mb']:>8.1f}")


if __name__ == "__main__":
    main()
