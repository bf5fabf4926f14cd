"""Where the microseconds of a Taxi-v4 Q-learning step go: issue 16's step-loop
figures taken apart, layer by layer, in one process (CPU µs per step, the
minimum of ``--repeats`` interleaved rounds, load average beside).

Layers (each includes the ones above it):

``plain``
    ``bench_execute.plain_loop``: gymnasium and the Q-learning arithmetic
    written inline — the reference of the issue's ratios.
``protocol``
    The same four xdoe components the run uses (``GymnasiumEnvironment``,
    ``QLearningMuscle``, ``QLearningBrain``, ``RewardObjective``), driven by
    the leanest loop the plugin API allows: ``start_environment`` and
    ``muscle.reset`` per episode, then the value forms the executor calls
    (``propose_values``, ``update_values``, ``internal_reward_values`` and
    ``thinking_values``) per step and ``muscle.update`` with the brain's table. No executor, no store: what the
    plugin protocol itself costs over the inline loop.
``run none``
    ``xdoe.execution.run`` of the same run, episodes stored (the issue's
    "episodes stored, in process" figure; store creation and results files included).
``run all``
    The same with every step stored.
``rows``
    The C work of storing the ``run all`` step rows alone: the same rows
    (read back from that run's store) inserted with the recorder's SQL through
    ``executemany`` in the recorder's batches (``flush_rows``, one transaction
    each, foreign keys on, WAL) into a new store, and their
    ``all_transactions.csv`` text (made beforehand) written in the same
    batches — no Python per row; ``csv.writer`` making and writing that
    text is printed beside it.

Printed: each layer's µs/step and ratio to ``plain``; what each layer adds;
and the budget each target leaves (``plain / target``) next to the floor
``protocol + rows``, below which no executor that stores every step in SQLite
and CSV can go with these components.

Usage: ``python benchmarks/step_loop_budget.py [--episodes N] [--repeats R]``
"""

from __future__ import annotations

import argparse
import csv
import inspect
import io
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_execute import ALPHA, EPSILON, GAMMA, TARGETS, plain_loop, xrun  # noqa: E402


def protocol_loop(episodes: int, seed: int = 7) -> tuple[int, float]:
    """Steps and CPU seconds of the xdoe components driven through the plugin
    protocol by a minimal loop (see the module docstring)."""
    from xdoe.agent import Experience, Mode
    from xdoe.components.agents import QLearningBrain, QLearningMuscle, RewardObjective
    from xdoe.components.environments import GymnasiumEnvironment

    env = GymnasiumEnvironment(uid="taxi", seed=seed, env_id="Taxi-v4")
    brain = QLearningBrain(seed=seed, alpha=ALPHA, gamma=GAMMA)
    muscle = QLearningMuscle(uid="learner", seed=seed, epsilon=EPSILON)
    objective = RewardObjective()
    cpu = time.process_time()
    baseline = env.start_environment()
    brain.setup(baseline.sensors, baseline.actuators)
    muscle.setup(baseline.sensors, baseline.actuators)
    brain.mode = muscle.mode = Mode.TRAIN
    muscle.update(brain.table)
    # the value forms, as the executor calls them (docs/plugins.md, "A step")
    propose, env_update = muscle.propose_values, env.update_values
    internal, thinking, update = objective.internal_reward_values, brain.thinking_values, muscle.update
    steps = 0
    for episode in range(episodes):
        if episode:
            baseline = env.start_environment()
        muscle.reset()
        observation = baseline.sensors[0].value
        done, step = False, 0
        while not done:
            action = propose(observation)
            observation2, rewards, terminated, truncated = env_update(action)
            done = terminated or truncated
            table = thinking(0, episode, step, observation, action, rewards, internal(rewards), observation2, done,
                             {}, truncated)
            if table is not None:
                update(table)
            observation = observation2
            steps += 1
            step += 1
    return steps, time.process_time() - cpu


def store_rows(store_path: Path, tmp: Path) -> tuple[int, float, float, float]:
    """Rows, and CPU seconds of inserting them into a new store, of writing
    their CSV text (made beforehand) to a file, and of ``csv.writer`` making
    and writing it (see ``rows`` in the module docstring)."""
    from xdoe.store import Store
    from xdoe.store.recorder._cells import _STEP_COLUMNS  # the recorder's column order
    from xdoe.store import RunRecorder

    with sqlite3.connect(store_path) as con:
        rows = con.execute(f"SELECT {', '.join(_STEP_COLUMNS)} FROM step ORDER BY id").fetchall()
        phase = con.execute("SELECT name, mode FROM phase").fetchone()
    target = tmp / f"rows-{time.monotonic_ns()}.sqlite"
    Store(f"sqlite:///{target}").close()  # the store's schema and pragmas
    flush_rows = inspect.signature(RunRecorder).parameters["flush_rows"].default
    con = sqlite3.connect(target, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute("PRAGMA foreign_keys = ON")
    # the parent rows the foreign keys need, copied from the run's store
    with sqlite3.connect(store_path) as source:
        for table in ("experiment", "run", "run_instance", "phase"):
            names = [f'"{r[1]}"' for r in source.execute(f"PRAGMA table_info({table})")]
            if not names:
                continue
            for row in source.execute(f"SELECT {', '.join(names)} FROM {table}"):
                con.execute(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                            row)
    sql = f"INSERT INTO step ({', '.join(_STEP_COLUMNS)}) VALUES ({', '.join('?' * len(_STEP_COLUMNS))})"
    cpu = time.process_time()
    for start in range(0, len(rows), flush_rows):
        con.execute("BEGIN IMMEDIATE")
        con.executemany(sql, rows[start:start + flush_rows])
        con.execute("COMMIT")
    insert = time.process_time() - cpu
    con.close()
    name, mode = phase
    lines = [(name, mode, *row[1:9], bool(row[9])) for row in rows]  # the CSV's columns
    with open(tmp / f"rows-{time.monotonic_ns()}.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        cpu = time.process_time()
        for start in range(0, len(lines), flush_rows):
            writer.writerows(lines[start:start + flush_rows])
            fh.flush()
        format_csv = time.process_time() - cpu
    texts = []
    for start in range(0, len(lines), flush_rows):  # the same text, made beforehand
        buffer = io.StringIO()
        csv.writer(buffer).writerows(lines[start:start + flush_rows])
        texts.append(buffer.getvalue())
    with open(tmp / f"rows-{time.monotonic_ns()}.csv", "w", newline="", encoding="utf-8") as fh:
        cpu = time.process_time()
        for text in texts:
            fh.write(text)
            fh.flush()
        write = time.process_time() - cpu
    return len(rows), insert, write, format_csv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    us: dict[str, list[float]] = {k: [] for k in ("plain", "protocol", "run none", "run all", "insert", "write",
                                                  "csv.writer")}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        xrun(20, "all", tmp)  # warm imports
        protocol_loop(20)
        for _ in range(args.repeats):
            steps, _, cpu, _ = plain_loop(args.episodes)
            us["plain"].append(cpu / steps * 1e6)
            steps, cpu = protocol_loop(args.episodes)
            us["protocol"].append(cpu / steps * 1e6)
            steps, _, cpu = xrun(args.episodes, "none", tmp)
            us["run none"].append(cpu / steps * 1e6)
            before = set(tmp.glob("bench-all-*.sqlite"))
            steps, _, cpu = xrun(args.episodes, "all", tmp)
            us["run all"].append(cpu / steps * 1e6)
            (store,) = set(tmp.glob("bench-all-*.sqlite")) - before
            rows, insert, write, format_csv = store_rows(store, tmp)
            us["insert"].append(insert / steps * 1e6)
            us["write"].append(write / steps * 1e6)
            us["csv.writer"].append(format_csv / steps * 1e6)
    best = {k: min(v) for k, v in us.items()}
    plain = best["plain"]
    print(f"Taxi-v4 Q-learning, {args.episodes} episodes ({steps} steps, {rows} step rows); CPU µs per step, "
          f"min of {args.repeats} rounds; load {load:.2f} -> {os.getloadavg()[0]:.2f}")
    previous = None
    for name in ("plain", "protocol", "run none", "run all"):
        added = "" if previous is None else f"  (+{best[name] - best[previous]:.2f} over {previous})"
        print(f"  {name:<9} {best[name]:6.2f} µs/step  ratio {plain / best[name]:.3f}{added}")
        previous = name if name != "run none" else "run none"
    rows_us = best["insert"] + best["write"]
    print(f"  rows      {rows_us:6.2f} µs/step  (SQLite executemany {best['insert']:.2f}, writing the CSV text "
          f"{best['write']:.2f}; csv.writer making and writing it: {best['csv.writer']:.2f})")
    print("budgets (plain / target) against floors:")
    print(f"  episodes stored : target {TARGETS['none']} allows {plain / TARGETS['none']:.2f} µs/step; "
          f"protocol alone {best['protocol']:.2f} (ratio {plain / best['protocol']:.3f}); "
          f"the executor and store now add {best['run none'] - best['protocol']:.2f}")
    floor = best["protocol"] + rows_us
    print(f"  every step      : target {TARGETS['all']} allows {plain / TARGETS['all']:.2f} µs/step; "
          f"floor protocol + rows {floor:.2f} (ratio {plain / floor:.3f}); "
          f"the executor's Python adds {best['run all'] - floor:.2f}")


if __name__ == "__main__":
    main()
