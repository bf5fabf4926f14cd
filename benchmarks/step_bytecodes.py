"""Bytecodes per step, per function, of the Taxi Q-learning step loop three
ways: the plain gymnasium loop (``bench_execute.plain_loop``), the components
alone (``step_loop_cachegrind.components_loop``: the run's environment,
muscle, objective and brain driven by a bare loop) and a real run
(``bench_execute.xrun``, episodes stored), counted with ``sys.settrace``'s
``opcode`` events (one event per bytecode the interpreter executes in a
Python function; C code, such as numpy's or SQLite's, counts nothing).

How to read it: each figure is the difference between ``N + 1`` episodes and
1 episode, both after a first 1-episode run outside the count, divided by
the difference in steps (the steady step loop; imports, set-up and the first
episode left out; episode ends are included, spread over the steps). The first table gives the totals of the three loops beside each
other, then the differences the issue cares about: ``components - plain``
(what the components add over the plain loop's own Q-learning) and ``run -
components`` (what the executor adds, episode ends included). The table per
function lists the functions of ``--top`` highest counts of each loop. One
bytecode costs ~30 instructions here (cachegrind's ``Ir``: the step's Ir of
``step_loop_cachegrind.py`` over these counts), so 150 bytecodes are ~5k Ir
per step; the reference is the plain loop's total.

The count is deterministic for a given seed and tree (the episodes are the
same every time), independent of the machine's load.

Usage: ``python benchmarks/step_bytecodes.py [--episodes N] [--top K]``
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def opcode_tracer(counts: "collections.Counter[tuple[str, str]]",
                  owner: Callable[[FrameType], FrameType] = lambda frame: frame) -> Callable[..., object]:
    """A ``sys.settrace`` function that counts each bytecode executed into
    ``counts[(file name, function)]`` of the frame ``owner(frame)`` (default:
    the frame that runs it)."""

    def tracer(frame, event, arg):  # noqa: ANN001, ANN202  (sys.settrace's signature)
        if event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return tracer
        if event == "opcode":
            code = owner(frame).f_code
            counts[(Path(code.co_filename).name, code.co_name)] += 1
        return tracer

    return tracer


def count(run: Callable[[int], int], episodes: int) -> tuple[dict[tuple[str, str], float], int]:
    """Bytecodes per step per ``(file name, function)`` of ``run`` between
    1 and ``episodes + 1`` episodes, and the steps between them."""
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    tracer = opcode_tracer(counts)
    run(1)  # imports and first-run work (caches, lazily built parts) outside both counts
    found = []
    for n in (1, episodes + 1):
        counts.clear()
        sys.settrace(tracer)
        try:
            steps = run(n)
        finally:
            sys.settrace(None)
        found.append((dict(counts), steps))
    (first, s1), (last, s2) = found
    steps = s2 - s1
    return {k: (v - first.get(k, 0)) / steps for k, v in last.items()}, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30, help="episodes measured (beyond the first)")
    parser.add_argument("--top", type=int, default=15, help="functions listed per loop")
    args = parser.parse_args()
    import bench_execute
    from step_loop_cachegrind import components_loop
    from xdoe.execution import _hooks

    _hooks.LIVE_SECONDS = _hooks.HEARTBEAT_SECONDS = float("inf")  # as step_loop_cachegrind.py: no clock hooks
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        loops = {
            "plain": lambda n: bench_execute.plain_loop(n)[0],
            "components": components_loop,
            "run": lambda n: bench_execute.xrun(n, "none", tmp)[0],
        }
        results = {label: count(run, args.episodes) for label, run in loops.items()}
    totals = {label: sum(per.values()) for label, (per, _) in results.items()}
    print(f"bytecodes per step, {args.episodes} Taxi episodes (sys.settrace opcode events; steps: "
          + ", ".join(f"{label} {steps}" for label, (_, steps) in results.items()) + ")")
    print("  " + "   ".join(f"{label} {total:,.1f}" for label, total in totals.items())
          + f"   (reference: plain {totals['plain']:,.1f})")
    print(f"  components - plain {totals['components'] - totals['plain']:+,.1f}"
          f"   run - components {totals['run'] - totals['components']:+,.1f}"
          f"   run / plain {totals['run'] / totals['plain']:.3f}")
    for label, (per, _) in results.items():
        print(f"{label}:")
        for (file, function), value in sorted(per.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"  {value:8.1f}  {file}:{function}")


if __name__ == "__main__":
    main()
