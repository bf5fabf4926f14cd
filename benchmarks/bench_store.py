"""Episode-write throughput of the store (RunRecorder -> bulk inserts + results files).

For SQLite (a fresh file) and, when a server is available, PostgreSQL (a fresh
schema), with 1 and 4 concurrent writer processes, each recording one run of
``--episodes`` episode rows through ``Store.recorder`` (one phase, default
flush of 1000 rows, episodes.jsonl and the average-reward CSV written too).
Prints rows/s over all writers and each writer's peak resident memory.

PostgreSQL: ``--postgres URL``, else ``$XDOE_TEST_POSTGRES_URL``, else the
throwaway server of ``scripts/postgres.sh`` (started when root and installed).

    python benchmarks/bench_store.py [--episodes 20000] [--writers 1 4]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from xdoe.store import Store
from xdoe.store.testing import postgres_admin_url, temporary_schema


def _document(uid: str) -> dict[str, Any]:
    return {"uid": uid, "experiment_uid": "bench", "seed": 1,
            "design_point": {"index": 0, "repetition": 0, "levels": {}},
            "schedule": [{"training": {"phase_config": {"mode": "train", "worker": 1}}}]}


def _writer(url: str, root: str, uid: str, episodes: int, barrier: Any, out: Any) -> None:
    store = Store(url)
    rec = store.recorder(_document(uid), results_root=Path(root))
    rec.start()
    rec.phase_started(0, "training", "train", {"mode": "train", "worker": 1})
    barrier.wait()
    started = time.perf_counter()
    for episode in range(episodes):
        rec.episode_finished(0, episode, "learner", 200, -1.5 * episode, -1.5, 0.004,
                             extras={"gravity": 9.81})
    rec.phase_finished()
    rec.finish("finished")
    elapsed = time.perf_counter() - started
    store.close()
    out.put((elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def measure(url: str, writers: int, episodes: int) -> tuple[float, float, float]:
    """(rows/s over all writers, wall seconds, max peak RSS MiB of a writer)."""
    Store(url).close()  # create the schema once, outside the timing
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(writers + 1), ctx.Queue()
    with tempfile.TemporaryDirectory() as root:
        procs = [ctx.Process(target=_writer, args=(url, root, f"bench-{i:04d}", episodes, barrier, out))
                 for i in range(writers)]
        for p in procs:
            p.start()
        barrier.wait()
        started = time.perf_counter()
        results = [out.get(timeout=600) for _ in procs]
        wall = time.perf_counter() - started
        for p in procs:
            p.join()
            if p.exitcode != 0:
                raise SystemExit(f"writer failed with exit code {p.exitcode}")
    return writers * episodes / wall, wall, max(rss for _, rss in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000, help="episode rows per writer")
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server")
    args = parser.parse_args()

    admin, reason = (args.postgres, "--postgres") if args.postgres else postgres_admin_url()
    print(f"episode rows per writer: {args.episodes}")
    print(f"{'backend':<10} {'writers':>7} {'rows/s':>10} {'wall s':>8} {'peak RSS MiB':>13}")
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        backends = []
        for writers in args.writers:
            backends.append(("sqlite", writers, f"sqlite:///{tmp / f'bench-{writers}.sqlite'}"))
        if admin is not None:
            for writers in args.writers:
                backends.append(("postgres", writers, stack.enter_context(temporary_schema(admin, "xdoe_bench"))))
        for name, writers, url in backends:
            rate, wall, rss = measure(url, writers, args.episodes)
            print(f"{name:<10} {writers:>7} {rate:>10,.0f} {wall:>8.2f} {rss:>13.1f}")
    if admin is None:
        print(f"postgres: skipped ({reason})")


if __name__ == "__main__":
    main()
