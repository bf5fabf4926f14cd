"""xrun at scale: four figures (issue 5).

1. 8 CPU-bound runs, ``--jobs 2`` vs ``--jobs 1`` (target: >= 1.8x faster);
2. a train phase with ``worker: 2`` on a CPU-bound environment, parallel
   workers vs in-process (target: >= 1.6x faster);
3. 200 tiny runs through the local SLURM cluster (``xrun submit --slurm``,
   PostgreSQL store): every run recorded exactly once (needs a SLURM cluster
   and a PostgreSQL server; skipped otherwise);
4. the store's episode-write throughput with 4 concurrent writer processes on
   PostgreSQL (``$XDOE_TEST_POSTGRES_URL`` or ``scripts/postgres.sh``).

Run: ``python benchmarks/bench_scale.py [--only 1,2,3,4]``. The load average
is printed before and after: on a shared machine, speed-ups below the
targets with a load above the core count are the neighbours' doing; re-run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from gymnasium import spaces

from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


class BusyEnvironment(Environment):
    """A CPU-bound environment: every update burns ``work`` iterations of
    pure-Python arithmetic; sensor ``<uid>.left``, actuator ``<uid>.push``
    (Discrete(3)), reward = pushed value; done after ``length`` updates."""

    def __init__(self, uid: str, seed: int, length: int = 50, work: int = 2000) -> None:
        super().__init__(uid=uid, seed=seed)
        self.length, self.work, self.left = length, work, length
        self.space = spaces.Discrete(length + 1)  # values left = length .. 0

    def start_environment(self) -> EnvironmentBaseline:
        self.left = self.length
        return EnvironmentBaseline([SensorInformation(self.full_id("left"), self.space, self.left)],
                                   [ActuatorInformation(self.full_id("push"), spaces.Discrete(3))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        x = 0
        for i in range(self.work):
            x = (x + i * i) % 1000003
        self.left -= 1
        pushed = next((a.value for a in actuators if a.value is not None), 0)
        return EnvironmentState([SensorInformation(self.full_id("left"), self.space, self.left)],
                                [RewardInformation(self.full_id("reward"), float(pushed))], self.left <= 0)


def busy_run(uid: str, *, episodes: int, worker: int = 1, length: int = 50, work: int = 2000,
             seed: int = 1) -> dict[str, Any]:
    return {
        "uid": uid, "experiment_uid": "bench-scale", "seed": seed,
        "schedule": [{"training": {
            "environments": [{"environment": {"name": "bench_scale:BusyEnvironment", "uid": "busy",
                                              "params": {"length": length, "work": work}}}],
            "agents": [{"name": "learner",
                        "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5}},
                        "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
                        "objective": {"name": "xdoe.agents:RewardObjective"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "train", "worker": worker, "episodes": episodes}}}],
    }


def tiny_run(uid: str, seed: int) -> dict[str, Any]:
    return {
        "uid": uid, "experiment_uid": "bench-slurm", "seed": seed,
        "schedule": [{"training": {
            "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "d",
                                              "params": {"length": 3, "sensors": 1, "actuators": 1,
                                                         "discrete": True}}}],
            "agents": [{"name": "rnd", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "train", "episodes": 2}}}],
    }


def write_runs(directory: Path, docs: list[dict[str, Any]]) -> list[str]:
    from ruamel.yaml import YAML

    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for doc in docs:
        path = directory / f"run-{doc['uid']}.yaml"
        with open(path, "w") as fh:
            YAML().dump(doc, fh)
        out.append(str(path))
    return out


def _burn(n: int) -> int:
    x = 0
    for i in range(n):
        x = (x + i * i) % 1000003
    return x


def capacity(n: int = 4_000_000) -> float:
    """Speed-up two processes get right now on a pure busy loop (2.0 on two
    idle cores): the ceiling for figures 1 and 2 at this moment."""
    import multiprocessing

    start = time.perf_counter()
    _burn(n)
    _burn(n)
    serial = time.perf_counter() - start
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_burn, [10, 10])
        start = time.perf_counter()
        pool.map(_burn, [n, n])
        parallel = time.perf_counter() - start
    return serial / parallel


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


# -- 1. --jobs -------------------------------------------------------------------------------

def bench_jobs(tmp: Path, size: int = 1) -> float:
    from xdoe.campaign import CampaignOptions, RunTask
    from xdoe.campaign.backends import ProcessPoolBackend, SequentialBackend

    files = write_runs(tmp / f"jobs-x{size}",
                       [busy_run(f"busy-{i}", episodes=12 * size, work=30000, seed=i) for i in range(8)])
    times = {}
    for jobs in (1, 2):
        url = f"sqlite:///{tmp / f'jobs{jobs}-x{size}.sqlite'}"
        tasks = [RunTask(f, CampaignOptions(store_url=url, results=None)) for f in files]
        backend = SequentialBackend() if jobs == 1 else ProcessPoolBackend(jobs)
        start = time.perf_counter()
        with backend:
            results = list(backend.map_runs(tasks))
        times[jobs] = time.perf_counter() - start
        assert all(r.status == "finished" for r in results), [(r.uid, r.error) for r in results]
    speedup = times[1] / times[2]
    print(f"1. 8 CPU-bound runs of {12 * size} episodes: --jobs 1 {times[1]:.2f} s, --jobs 2 {times[2]:.2f} s "
          f"(pool start-up included): speed-up {speedup:.2f}x (target >= 1.8x)")
    return speedup


# -- 2. parallel workers --------------------------------------------------------------------------

def bench_workers(tmp: Path, size: int = 1) -> float:
    from xdoe.execution import run
    from xdoe.execution._parallel_workers import parallel_workers

    episodes = 40 * size
    doc = busy_run("workers", episodes=episodes, worker=2, length=50, work=30000)
    start = time.perf_counter()
    a = run(doc, store=f"sqlite:///{tmp / f'w-inproc-x{size}.sqlite'}", results=None)
    t_in = time.perf_counter() - start
    start = time.perf_counter()
    with parallel_workers():
        b = run(doc, store=f"sqlite:///{tmp / f'w-par-x{size}.sqlite'}", results=None)
    t_par = time.perf_counter() - start
    assert a.ok and b.ok, (a.error, b.error)
    assert a.episodes == b.episodes == 2 * episodes and a.steps == b.steps
    speedup = t_in / t_par
    print(f"2. worker: 2 x {episodes} episodes x 50 CPU-bound steps: in-process {t_in:.2f} s, "
          f"parallel workers {t_par:.2f} s (process start-up included): speed-up {speedup:.2f}x "
          f"(target >= 1.6x)")
    return speedup


# -- 3. SLURM -------------------------------------------------------------------------------------

def _postgres_admin() -> str | None:
    from xdoe.store.testing import postgres_admin_url

    url, reason = postgres_admin_url()
    if url is None:
        print(f"   (no PostgreSQL: {reason})")
    return url


def bench_slurm(tmp: Path, n: int = 200) -> None:
    from xdoe.campaign.backends._slurm import wait_for
    from xdoe.store import Store
    from xdoe.store.testing import temporary_schema

    conf = os.environ.get("SLURM_CONF") or "/tmp/xdoe-slurm/slurm.conf"
    env = {**os.environ, "SLURM_CONF": conf}
    if shutil.which("sinfo") is None or subprocess.run(["sinfo", "-h"], env=env, capture_output=True,
                                                       timeout=30).returncode != 0:
        print("3. SLURM: skipped (no cluster answers; start one with scripts/slurm.sh start)")
        return
    admin = _postgres_admin()
    if admin is None:
        print("3. SLURM: skipped (no PostgreSQL store)")
        return
    files = write_runs(tmp / "_outputs", [tiny_run(f"t{i:03d}", i) for i in range(n)])
    with temporary_schema(admin, prefix="xdoe_bench") as url:
        Store(url).close()
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "xdoe.cli._xrun", "submit", "--slurm", "--store", url, "--runs-per-task", "10",
             "--results", str(tmp / "results"), str(tmp / "_outputs")],
            cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            print(f"3. SLURM: submit failed: {proc.stderr.strip()[-500:]}")
            return
        ids = re.findall(r"submitted job array (\d+)", proc.stdout + proc.stderr)
        old = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = conf
        try:
            wait_for(ids, timeout=1800)
        finally:
            if old is None:
                os.environ.pop("SLURM_CONF", None)
        elapsed = time.perf_counter() - start
        with Store(url) as store:
            instances = store.runs.instances()
        counts = Counter(i.run_uid for i in instances)
        finished = sum(1 for i in instances if i.status == "finished")
        once = len(counts) == n and set(counts.values()) == {1}
        print(f"3. SLURM: {n} tiny runs in {len(files) // 10} array tasks: {elapsed:.1f} s submit-to-done; "
              f"{len(counts)} runs recorded, {finished} finished instances, "
              f"every run exactly once: {once}")


# -- 4. PostgreSQL writers ------------------------------------------------------------------------

def _writer(url: str, index: int, episodes: int, queue: Any) -> None:
    from xdoe.store import Store

    with Store(url) as store:
        rec = store.recorder({"uid": f"writer-{index}", "seed": index, "schedule": []}, results_root=None)
        rec.start()
        rec.phase_started(0, "training", "train", {"worker": 1})
        queue.get()  # start together
        start = time.perf_counter()
        for e in range(episodes):
            rec.episode_finished(0, e, "agent", 10, float(e), float(e), 0.001)
        rec.phase_finished()
        rec.finish("finished")
        queue.put(time.perf_counter() - start)


def bench_postgres_writers(tmp: Path, writers: int = 4, episodes: int = 20000) -> None:
    import multiprocessing

    from xdoe.store import Store
    from xdoe.store.testing import temporary_schema

    admin = _postgres_admin()
    if admin is None:
        print("4. PostgreSQL writers: skipped")
        return
    ctx = multiprocessing.get_context("spawn")
    with temporary_schema(admin, prefix="xdoe_bench") as url:
        Store(url).close()
        go, done = ctx.Queue(), ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(url, i, episodes, _Both(go, done))) for i in range(writers)]
        for p in procs:
            p.start()
        time.sleep(3)  # let every writer start its instance
        start = time.perf_counter()
        for _ in procs:
            go.put(1)
        spans = [done.get(timeout=600) for _ in procs]
        wall = time.perf_counter() - start
        for p in procs:
            p.join()
        with Store(url) as store:
            stored = sum(1 for _ in store.runs.episodes())
    total = writers * episodes
    assert stored == total, (stored, total)
    print(f"4. PostgreSQL, {writers} concurrent writers x {episodes} episodes: {total / wall:,.0f} episode rows/s "
          f"overall ({wall:.2f} s; per writer {min(spans):.2f}-{max(spans):.2f} s); all {stored} rows stored")


class _Both:
    """One picklable object holding the start and the done queue."""

    def __init__(self, go: Any, done: Any) -> None:
        self.go, self.done = go, done

    def get(self) -> Any:
        return self.go.get()

    def put(self, value: Any) -> None:
        self.done.put(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="1,2,3,4", help="comma-separated figures to measure")
    parser.add_argument("--size", type=int, default=1,
                        help="multiply the episodes of figures 1 and 2 (longer runs amortise the fixed "
                             "process start-up; default 1: about 10 s sequential each)")
    args = parser.parse_args()
    only = {int(x) for x in args.only.split(",")}
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    print(f"before: {load()}; two-process capacity now {capacity():.2f}x")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as t:
        tmp = Path(t)
        if 1 in only:
            bench_jobs(tmp, args.size)
        if 2 in only:
            bench_workers(tmp, args.size)
        if 3 in only:
            bench_slurm(tmp)
        if 4 in only:
            bench_postgres_writers(tmp)
    print(f"after:  {load()}; two-process capacity now {capacity():.2f}x")


if __name__ == "__main__":
    main()
