"""Speed of skipping finished runs (issue 4, target: 1,000 finished runs
skipped in under 2 s).

End to end: writes ``--runs`` run-document files as xgen does
(``run-bench-NNNN.yaml``, canonical YAML), runs ``--real`` of them for
real with ``xrun experiment-start`` and records the others as finished in
bulk (the same experiment, run and instance rows ``xrun`` writes: content
hash, canonical document and, when the schema has it, the sha256 of the
file's bytes), checks that the bulk rows match what the real runs wrote, and
then times, as wall time of a subprocess (Python start-up and imports
included):

- ``xrun experiment-start --quiet run-*.yaml``;
- ``xrun experiment-start run-*.yaml`` with the summary table (stdout to
  a file, as in a batch job).

Both must report every run ``skipped`` and exit 0. For reference it also
times, in this process, ``xdoe.campaign.Campaign.run`` on the already loaded
documents (the skip decision alone: one query, then the skipped results) and
reading one run-document file (ruamel.yaml + validation), which the
command does for every file it cannot skip by the file's hash.

Usage: ``python benchmarks/bench_resume.py [--runs N] [--repeats R] [--real K]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
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


def write_files(folder: Path, n: int) -> list[Path]:
    from xdoe.documents import dump_canonical

    folder.mkdir(parents=True)
    files = []
    for i in range(n):
        path = folder / f"run-bench-{i:04d}.yaml"
        path.write_text(dump_canonical(run_document(i)), encoding="utf-8")
        files.append(path)
    return files


def populate(store, plans, files) -> None:
    """The rows of a finished run (experiment, run, instance) for every plan, in bulk."""
    import socket
    import uuid

    from sqlalchemy import insert, select

    from xdoe.store import Experiment, Run, RunInstance, canonical_json, document_hash, utcnow

    now = utcnow()
    with_file_hash = hasattr(Run, "file_sha256")
    with store.database.orm_write("populate") as session:
        exp_id = session.execute(select(Experiment.id).where(Experiment.uid == "bench")).scalar_one_or_none()
        if exp_id is None:
            session.execute(insert(Experiment), [{"uid": "bench", "created": now}])
            exp_id = session.execute(select(Experiment.id).where(Experiment.uid == "bench")).scalar_one()
        rows = []
        for p, f in zip(plans, files):
            row = {"uid": p.uid, "experiment_id": exp_id, "content_hash": document_hash(p.document),
                   "document": canonical_json(p.document), "created": now}
            if with_file_hash:
                row["file_sha256"] = hashlib.sha256(f.read_bytes()).hexdigest()
            rows.append(row)
        session.execute(insert(Run), rows)
        ids = dict(session.execute(select(Run.uid, Run.id).where(Run.uid.in_([p.uid for p in plans]))).all())
        session.execute(insert(RunInstance), [
            {"uuid": str(uuid.uuid4()), "run_id": ids[p.uid], "host": socket.gethostname(),
             "pid": os.getpid(), "start": now, "end": now, "status": "finished", "heartbeat": now}
            for p in plans])


def xrun(args: list[str], cwd: Path, stdout: Path) -> tuple[float, str]:
    """Wall time of ``xrun ARGS`` in a subprocess; its stdout text."""
    cmd = [sys.executable, "-m", "xdoe.cli._xrun", *args]
    env = {k: v for k, v in os.environ.items() if k != "XRUN_STORE"}
    with stdout.open("w") as out:
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - t
    text = stdout.read_text()
    if proc.returncode != 0:
        raise SystemExit(f"xrun exited {proc.returncode}: {proc.stderr[-2000:]}")
    return elapsed, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--real", type=int, default=5, help="runs executed for real first")
    args = parser.parse_args()

    from xdoe.campaign import Campaign, CampaignOptions
    from xdoe.execution import load_plan
    from xdoe.store import Run, Store

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        files = write_files(tmp / "_outputs", args.runs)
        url = f"sqlite:///{tmp / 'xrun.sqlite'}"
        results = tmp / "results"
        real, bulk = files[: args.real], files[args.real:]
        if real:  # the real thing, for the rows the bulk insert imitates
            xrun(["experiment-start", "--quiet", "--store", url, "--results", str(results),
                  *map(str, real)], tmp, tmp / "out.txt")
        t = time.perf_counter()
        bulk_plans = [load_plan(f) for f in bulk]
        per_file = (time.perf_counter() - t) / max(1, len(bulk))
        with Store(url) as store:
            populate(store, bulk_plans, bulk)
            if real and hasattr(Run, "file_sha256"):
                from sqlalchemy import select

                with store.database.orm_read("check") as session:
                    recorded = dict(session.execute(select(Run.uid, Run.file_sha256)).all())
                for f in real:
                    plan = load_plan(f)
                    assert recorded[plan.uid] == hashlib.sha256(f.read_bytes()).hexdigest(), plan.uid
        plans = [load_plan(f) for f in real] + bulk_plans

        names = [str(f.relative_to(tmp)) for f in files]
        figures: dict[str, list[float]] = {"xrun experiment-start --quiet": [],
                                           "xrun experiment-start (summary table)": [],
                                           "Campaign.run, documents loaded": []}
        for _ in range(args.repeats):
            elapsed, _text = xrun(["experiment-start", "--quiet", "--store", url, *names], tmp,
                                  tmp / "out.txt")
            figures["xrun experiment-start --quiet"].append(elapsed)
            elapsed, text = xrun(["experiment-start", "--store", url, *names], tmp, tmp / "out.txt")
            figures["xrun experiment-start (summary table)"].append(elapsed)
            assert text.count("skipped") == args.runs, text[-500:]
            t = time.perf_counter()
            out = Campaign(plans, CampaignOptions(store_url=url, results=str(results))).run()
            figures["Campaign.run, documents loaded"].append(time.perf_counter() - t)
            assert [r.status for r in out] == ["skipped"] * args.runs, {r.status for r in out}
        with Store(url) as store:
            assert len(store.runs.instances()) == args.runs, "a finished run ran again"
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import xdoe.cli._xrun"], check=True)
        startup = time.perf_counter() - t

    print(f"skipping {args.runs} finished runs end to end (median of {args.repeats}; target < 2 s):")
    for name, values in figures.items():
        print(f"  {name:<40} {statistics.median(values):7.3f} s")
    print(f"  {'(python start-up + import xdoe.cli._xrun)':<40} {startup:7.3f} s")
    print(f"reading one run document (ruamel.yaml + validation): {per_file * 1000:.2f} ms per file, "
          f"{per_file * args.runs:.2f} s for {args.runs}")


if __name__ == "__main__":
    main()
