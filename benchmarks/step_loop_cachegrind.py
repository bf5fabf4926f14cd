"""Issue 16's step-loop targets measured without the machine's timing noise:
per step, the instructions, cache misses and branch mispredictions of
``xdoe.execution.run`` (episodes stored; every step stored) against the plain
gymnasium loop of ``bench_execute.py`` and against the components alone
(``components``: :func:`components_loop`, the run's environment, muscle,
objective and brain driven by a bare loop: their own share of a step),
simulated by ``valgrind
--tool=cachegrind --cache-sim=yes --branch-sim=yes`` (the machine's own cache
sizes; independent of load and of a virtual machine's varying speed; str
hashing fixed, see :func:`counts`).

Each figure is the difference between a process running ``N + 1`` episodes
and one running 1 episode, divided by the difference in steps: the steady
step loop, start-up and per-run set-up (store, results files, Taxi
construction) left out; ``--whole`` adds the whole-process figure of issue
16 (``xrun experiment-start --in-process --no-laydown`` of ``--process-episodes``
episodes against the plain loop in a fresh process, everything included).

Printed per step: instructions (Ir), first-level instruction and data cache
misses (I1, D1), last-level misses (LL), mispredicted branches (Bm), and an
estimate of cycles ``Ir + 10 L1 + 200 LL + 20 Bm`` — the costs the Cachegrind
manual gives ("an L1 miss will typically cost around 10 cycles, an LL miss can
cost as much as 200 cycles, and a mispredicted branch costs in the region of
10 to 30 cycles"; Valgrind User Manual, ch. 5) — and the speed ratios to the
plain loop next to the targets (issue 35: >= 0.85 episodes stored, >= 0.6
every step stored; issue 16: >= 0.6 whole process). The run's clock-driven
hooks are left out of the per-step figures (see :func:`child`); ``--ticks``
prints their cost per episode end apart. Needs ``valgrind``; takes ~10 minutes
(~20 with ``--whole``) on a 2-core machine.

``--counted``: instructions only, counted by ``valgrind --tool=callgrind
--collect-atstart=no --toggle-collect=functools_reduce`` in processes that
run 1 episode first (imports, caches and the first run's work outside the
count) and then the measured episodes inside a call of ``functools.reduce``
(:func:`child`): the two-process differences above move by ~1.2k Ir per step
between runs of the same code (session 6: the plain loop 92,087 and 93,289),
the counted region's by ~0.2k, the size of one change of the step. ~4 minutes.

Usage: ``python benchmarks/step_loop_cachegrind.py [--episodes N] [--modes M ...] [--ticks] [--whole] [--process-episodes N] [--counted]``
"""

from __future__ import annotations

import argparse
import compileall
import functools
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODES = ("plain", "components", "none", "all")
TARGETS = {"none": 0.85, "all": 0.6, "whole": 0.6}
COUNTERS = ("Ir", "I1", "D1", "LL", "Bm")
_SUMMARY = {"Ir": r"I\s+refs:\s+([\d,]+)", "I1": r"I1\s+misses:\s+([\d,]+)",
            "D1": r"D1\s+misses:\s+([\d,]+)", "LL": r"LL misses:\s+([\d,]+)", "Bm": r"Mispredicts:\s+([\d,]+)"}


def child(mode: str, episodes: int, out: Path, counted: bool = False) -> None:
    """In the measured process: run ``episodes`` of ``mode`` and write the steps to ``out``
    (``counted``: 1 episode first, then the ``episodes`` inside the one call of
    ``functools.reduce`` in the process, the region ``--counted`` counts).

    The run's clock-driven hooks (the 2-s live tick and the 10-s heartbeat,
    ``xdoe.execution._hooks``) are set to fire never (``none``, ``all``) or
    at every episode end (``ticks``: ``none`` with them): under valgrind the
    clock runs ~50x slower against the work, so they would fire ~50x as often
    per episode as in a normal run; their cost is the ``ticks`` row's, apart."""
    sys.path.insert(0, str(HERE))
    import bench_execute
    from xdoe.execution import _hooks

    _hooks.LIVE_SECONDS = _hooks.HEARTBEAT_SECONDS = -1.0 if mode == "ticks" else math.inf

    def run(n: int) -> int:
        if mode == "plain":
            return bench_execute.plain_loop(n)[0]
        if mode == "components":
            return components_loop(n)
        # no laydown.svg: drawn once per run structure, not part of the step loop
        return bench_execute.xrun(n, "none" if mode == "ticks" else mode, out.parent)[0]

    if counted:
        run(1)
        steps = functools.reduce(lambda _, __: run(episodes), [0, 0])
    else:
        steps = run(episodes)
    out.write_text(str(steps))


def components_loop(episodes: int) -> int:
    """Steps of ``episodes`` of the components of ``bench_execute.document``
    alone: constructed, seeded and set up as the run's phase does it
    (``xdoe.execution._phase``; environment, brain and muscle seeds from the
    document's seed, phase 0, worker 0), then driven by a bare loop that calls
    per step what the executor calls (``xdoe.execution._worker``): the
    muscle's ``propose_values``, the environment's ``update_values``, the
    objective's ``internal_reward_values`` and the brain's ``thinking_values``
    with the executor's arguments (a non-``None`` answer to the muscle's
    ``update``); per episode ``start_environment`` and the muscle's ``reset``.
    The same episodes as ``xrun`` (the same steps): what is left of a step
    when the executor does nothing."""
    sys.path.insert(0, str(HERE))
    import bench_execute
    from xdoe.agent import Brain, Mode, Muscle, Objective
    from xdoe.environment import Environment
    from xdoe.execution import brain_seed, construct, environment_seed, load_class, muscle_seed

    document = bench_execute.document(episodes)
    seed, phase = document["seed"], document["schedule"][0]["training"]
    (spec,), (agent,) = [e["environment"] for e in phase["environments"]], phase["agents"]
    name = agent["name"]

    def build(part: dict, base: type, **fixed: object) -> object:
        return construct(load_class(part["name"], name, base=base), name, part.get("params"), **fixed)

    env = build(spec, Environment, uid=spec["uid"], seed=environment_seed(seed, 0, 0, spec["uid"]))
    baseline = env.start_environment()
    sensors = [s for s in baseline.sensors if s.uid in agent["sensors"]]
    actuators = [a for a in baseline.actuators if a.uid in agent["actuators"]]
    brain = build(agent["brain"], Brain, seed=brain_seed(seed, name))
    brain.setup(sensors, actuators)
    brain.mode = muscle_mode = Mode(phase["phase_config"]["mode"])
    brain.workers = 1
    muscle = build(agent["muscle"], Muscle, uid=name, seed=muscle_seed(seed, 0, 0, name))
    objective = build(agent["objective"], Objective)
    muscle.setup(sensors, actuators)
    muscle.mode = muscle_mode
    state = brain.muscle_state()
    if state is not None:
        muscle.update(state)
    propose, update_values = muscle.propose_values, env.update_values
    internal, think = objective.internal_reward_values, brain.thinking_values
    steps = 0
    for episode in range(episodes):
        if episode:
            baseline = env.start_environment()
        muscle.reset()
        (sensor,) = baseline.sensors
        observation, step, done = sensor.value, 0, False
        while not done:
            action = propose(observation)
            extras = muscle.extras
            next_observation, rewards, terminated, truncated = update_values(action)
            objective_value = internal(rewards)
            done = terminated or truncated
            update = think(0, episode, step, observation, action, rewards, objective_value, next_observation,
                           done, {} if extras is None else extras, done and not terminated)
            if update is not None:
                muscle.update(update)
            observation = next_observation
            step += 1
        steps += step
    return steps


def counts(argv: list[str], cwd: Path) -> dict[str, int]:
    """The cachegrind summary counters of the process ``argv``, run with
    ``PYTHONHASHSEED=0``: with str hashes drawn anew in every process, the
    dicts' layouts and so the instructions per step vary by ~2 % from run to
    run (issue 35: 124,565 and 127,037 Ir per step of one commit under two
    seeds), more than the changes being compared."""
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                           "--cachegrind-out-file=/dev/null", *argv], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    found = {}
    for key, pattern in _SUMMARY.items():
        match = re.search(pattern, proc.stderr)
        if match is None:
            raise SystemExit(f"no {key} in cachegrind's summary:\n{proc.stderr[-2000:]}")
        found[key] = int(match.group(1).replace(",", ""))
    return found


def counted_ir(argv: list[str], cwd: Path) -> int:
    """The instructions of the counted region (``functools.reduce``, see
    ``--counted``) of the process ``argv``, run with ``PYTHONHASHSEED=0``."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no",
                           "--toggle-collect=functools_reduce", "--callgrind-out-file=/dev/null", *argv],
                          capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONHASHSEED": "0"})
    match = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode != 0 or match is None:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    return int(match.group(1))


def cycles(c: dict[str, float]) -> float:
    """The Cachegrind manual's rough costs: 10 cycles an L1 miss, 200 an LL miss, 20 a mispredict."""
    return c["Ir"] + 10 * (c["I1"] + c["D1"]) + 200 * c["LL"] + 20 * c["Bm"]


def per_step(mode: str, episodes: int, tmp: Path, counted: bool = False) -> tuple[dict[str, float], int]:
    """Counters per step of ``mode`` between 1 and ``episodes + 1`` episodes
    (``counted``: only ``Ir``, of the counted region)."""
    runs = []
    for n in (1, episodes + 1):
        folder = Path(tempfile.mkdtemp(dir=tmp))
        out = folder / "steps.txt"
        argv = [sys.executable, __file__, "--child", mode, str(n), str(out)]
        c = {"Ir": counted_ir([*argv, "--counted"], folder)} if counted else counts(argv, folder)
        runs.append((c, int(out.read_text())))
    (c1, s1), (c2, s2) = runs
    return {k: (c2[k] - c1[k]) / (s2 - s1) for k in c1}, s2 - s1


def whole(episodes: int, tmp: Path) -> dict[str, tuple[dict[str, int], int]]:
    """Counters of the whole plain process and of ``xrun experiment-start
    --in-process --no-laydown`` (one process: its count is complete) of ``episodes``."""
    sys.path.insert(0, str(HERE))
    from bench_execute import document, plain_process, xrun_process
    from ruamel.yaml import YAML

    path = tmp / "whole.yaml"
    with open(path, "w") as fh:
        YAML().dump(document(episodes), fh)
    steps_file = tmp / "plain-steps.txt"
    plain = counts(plain_process(episodes, steps_file), tmp)
    store = tmp / "whole.sqlite"
    xrun = counts(xrun_process(path, store, tmp / "results", "--no-laydown", "--in-process"), tmp)
    with sqlite3.connect(store) as con:
        (steps,) = con.execute("SELECT sum(steps) FROM episode").fetchone()
    return {"plain": (plain, int(steps_file.read_text())), "xrun": (xrun, int(steps))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes measured (beyond the first)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES),
                        help="the per-step modes measured (default: all; plain is always measured)")
    parser.add_argument("--whole", action="store_true", help="also the whole-process figure")
    parser.add_argument("--process-episodes", type=int, default=3000)
    parser.add_argument("--ticks", action="store_true",
                        help="also the cost of the live tick and heartbeat, per episode end")
    parser.add_argument("--counted", action="store_true",
                        help="instructions of the counted region only (steadier; see the module docstring)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, n, out = args.child
        child(mode, int(n), Path(out), args.counted)
        return
    if args.counted and (args.ticks or args.whole):
        parser.error("--ticks and --whole take cachegrind's full counters: run them without --counted")
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    import xdoe

    compileall.compile_dir(str(Path(xdoe.__file__).parent), quiet=1)  # measure the code, not its compilation
    compileall.compile_dir(str(HERE), quiet=1, maxlevels=0)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with ThreadPoolExecutor(max(1, min(3, os.cpu_count() or 1))) as pool:
            modes = ("plain", *[m for m in MODES if m in args.modes and m != "plain"],
                     *(("ticks",) if args.ticks else ()))
            futures = {mode: pool.submit(per_step, mode, args.episodes, tmp, args.counted) for mode in modes}
            whole_future = pool.submit(whole, args.process_episodes, tmp) if args.whole else None
            results = {mode: f.result() for mode, f in futures.items()}
            whole_result = whole_future.result() if whole_future is not None else None
    ticks = results.pop("ticks", None)
    plain = results["plain"][0]
    if args.counted:
        print(f"Ir per step, counted region, {args.episodes} episodes (steps: "
              + ", ".join(f"{m} {s}" for m, (_, s) in results.items()) + ")")
        for mode, (c, _) in results.items():
            ratio = "" if mode == "plain" else f"{plain['Ir'] / c['Ir']:.3f}"
            target = f">= {TARGETS[mode]}" if mode in TARGETS else ""
            print(f"{mode:12}{c['Ir']:>10,.0f}{ratio:>8}{target:>8}")
        return
    print(f"per step, {args.episodes} episodes (cachegrind; steps: "
          + ", ".join(f"{m} {s}" for m, (_, s) in results.items()) + ")")
    print(f"{'':8}" + "".join(f"{k:>10}" for k in (*COUNTERS, "cycles~")) + f"{'speed vs plain':>18}{'target':>8}")
    for mode, (c, _) in results.items():
        row = [c[k] for k in COUNTERS] + [cycles(c)]
        ratio = "" if mode == "plain" else f"{cycles(plain) / cycles(c):.3f} ({plain['Ir'] / c['Ir']:.3f} Ir)"
        target = f">= {TARGETS[mode]}" if mode in TARGETS else ""
        print(f"{mode:8}" + "".join(f"{v:>10,.0f}" for v in row) + f"{ratio:>18}{target:>8}")
    if ticks is not None and "none" in results:
        none_steps, tick_steps = results["none"][1], ticks[1]
        print(f"clock-driven hooks (live tick and heartbeat) at every episode end: "
              f"{(ticks[0]['Ir'] * tick_steps - results['none'][0]['Ir'] * none_steps) / args.episodes:,.0f} Ir "
              f"per episode end ({ticks[0]['Ir']:,.0f} Ir per step with them, {tick_steps} steps); "
              "a normal run fires them once per 2 s and 10 s")
    if whole_result is not None:
        (pc, ps), (xc, xs) = whole_result["plain"], whole_result["xrun"]
        print(f"whole process, {args.process_episodes} episodes: plain {pc['Ir'] / 1e9:.2f} G instructions "
              f"({ps} steps), xrun {xc['Ir'] / 1e9:.2f} G ({xs} steps); speed vs plain "
              f"{(xs / cycles(xc)) / (ps / cycles(pc)):.3f} by cycles~, "
              f"{(xs / xc['Ir']) / (ps / pc['Ir']):.3f} by instructions (target >= {TARGETS['whole']})")


if __name__ == "__main__":
    main()
