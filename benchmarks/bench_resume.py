"""Speed of skipping finished runs (issue 4, target: 1,000 finished runs
skipped in under 2 s).

Builds a SQLite store holding 1,000 run versions, each with a finished
instance (rows inserted in bulk: the same rows ``xrun`` writes for a run's
experiment, run and instance), then times, for the 1,000 already loaded
run documents:

- ``cli``: ``xdoe.cli._jobs.run_plans`` (what ``xrun experiment-start`` does
  after loading the files: one query for every finished (uid, hash) pair,
  then the skipped results);
- ``api``: ``xdoe.execution.run`` called once per run with the
  ``finished`` mapping computed once (the loop of a Python script);
- ``api, one query per run``: ``run`` without that mapping;

and, for reference, reading the 1,000 run-document files (YAML parsing and
validation), which ``xrun experiment-start`` does before deciding anything.

Usage: ``python benchmarks/bench_resume.py [--runs N] [--repeats R]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def run_document(i: int) -> dict:
    phase = {
        "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "d",
                                          "params": {"length": 3, "sensors": 1, "actuators": 1}}}],
        "agents": [{"name": "a", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                    "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                    "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
        "phase_config": {"mode": "train", "worker": 1, "episodes": 2},
    }
    return {"uid": f"bench-{i:04d}", "experiment_uid": "bench", "seed": i, "version": "1.0",
            "design_point": {"index": i, "repetition": 0, "levels": {"x": i}},
            "schedule": [{"training": phase}, {"testing": {"phase_config": {"mode": "test"}}}]}


def populate(store, plans) -> None:
    import os
    import socket
    import uuid

    from sqlalchemy import insert, select

    from xdoe.store import Experiment, Run, RunInstance, canonical_json, document_hash, utcnow

    now = utcnow()
    with store._write("populate") as session:
        session.execute(insert(Experiment), [{"uid": "bench", "created": now}])
        exp_id = session.execute(select(Experiment.id)).scalar_one()
        session.execute(insert(Run), [
            {"uid": p.uid, "experiment_id": exp_id, "content_hash": document_hash(p.document),
             "document": canonical_json(p.document), "created": now} for p in plans])
        ids = dict(session.execute(select(Run.uid, Run.id)).all())
        session.execute(insert(RunInstance), [
            {"uuid": str(uuid.uuid4()), "run_id": ids[p.uid], "host": socket.gethostname(),
             "pid": os.getpid(), "start": now, "end": now, "status": "finished", "heartbeat": now}
            for p in plans])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from xdoe.cli._jobs import run_plans
    from xdoe.execution import load_plan, run
    from xdoe.execution._resume import finished_instances
    from xdoe.store import Store

    plans = [load_plan(run_document(i)) for i in range(args.runs)]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'xrun.sqlite'}"
        results = Path(tmp) / "results"
        with Store(url) as store:
            populate(store, plans)
        figures: dict[str, list[float]] = {"cli": [], "api": [], "api, one query per run": []}
        for _ in range(args.repeats):
            t = time.perf_counter()
            out = run_plans(plans, store_url=url, results=results, store_steps="none")
            figures["cli"].append(time.perf_counter() - t)
            assert [r.status for r in out] == ["skipped"] * args.runs, {r.status for r in out}
            with Store(url) as store:
                t = time.perf_counter()
                finished = finished_instances(store)
                out = [run(p, store=store, results=results, finished=finished) for p in plans]
                figures["api"].append(time.perf_counter() - t)
                assert all(r.status == "skipped" for r in out)
                t = time.perf_counter()
                out = [run(p, store=store, results=results) for p in plans]
                figures["api, one query per run"].append(time.perf_counter() - t)
                assert all(r.status == "skipped" for r in out)
        assert not results.exists(), "a skipped run wrote results"

        from ruamel.yaml import YAML

        files = []
        for i in range(min(args.runs, 200)):
            path = Path(tmp) / f"run-{i:04d}.yaml"
            with path.open("w") as fh:
                YAML().dump(run_document(i), fh)
            files.append(path)
        t = time.perf_counter()
        for path in files:
            load_plan(path)
        per_file = (time.perf_counter() - t) / len(files)

    print(f"skipping {args.runs} finished runs (median of {args.repeats}; target < 2 s):")
    for name, values in figures.items():
        print(f"  {name:<24} {statistics.median(values):7.3f} s")
    print(f"reading run documents (ruamel.yaml + validation): {per_file * 1000:.2f} ms per file, "
          f"{per_file * args.runs:.2f} s for {args.runs}")


if __name__ == "__main__":
    main()
