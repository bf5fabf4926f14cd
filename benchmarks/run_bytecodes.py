"""Bytecodes of a run's fixed work, per xdoe function (issue 35, the 64-run
Taxi grid): where the ``xrun − plain`` instructions of ``run_fixed_cost.py``
go, in one process, independent of the machine's load.

``xrun experiment-start --in-process --no-laydown --quiet`` of one and of
``--runs`` one-episode runs of ``bench_hydra.write_runs`` (~195 Taxi steps
each), after a first campaign outside the count, counted with
``sys.settrace``'s ``opcode`` events; the difference divided by the extra
runs is one run's bytecodes. Each bytecode is charged to the innermost xdoe
function on the stack when it ran (a library's work to the xdoe function
that called it: ``_yaml.py:compose_node`` holds ruamel.yaml's parsing of the
run document, ``_gymnasium.py:_make`` Taxi's construction, ``_cells.py`` the
SQLAlchemy statements of the store's rows). C code (SQLite, numpy,
pydantic-core) counts nothing: ``run_fixed_cost.py`` has the instructions.
The clock-driven hooks fire never, as there.

Usage: ``python benchmarks/run_bytecodes.py [--runs N] [--top K]``
"""

from __future__ import annotations

import argparse
import collections
import math
import shutil
import sys
import tempfile
from pathlib import Path
from types import FrameType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def campaign(work: Path, runs: list[Path], tracer: object = None) -> None:
    """``xrun experiment-start`` of ``runs`` in this process, traced by ``tracer`` when given."""
    from xdoe.cli._xrun import main

    (work / "runs").mkdir(parents=True)
    for path in runs:
        shutil.copy(path, work / "runs" / path.name)
    argv = ["experiment-start", str(work / "runs"), "--quiet", "--in-process", "--no-laydown",
            "--store", f"sqlite:///{work / 'store.sqlite'}", "--results", str(work / "results")]
    if tracer is not None:
        sys.settrace(tracer)  # type: ignore[arg-type]
    try:
        main(argv, standalone_mode=False)
    except SystemExit:
        pass
    finally:
        sys.settrace(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs of the larger campaign (2..64; default 9)")
    parser.add_argument("--top", type=int, default=30, help="functions listed (default 30)")
    args = parser.parse_args()
    if not 2 <= args.runs <= 64:
        raise SystemExit("--runs must be in 2..64")
    from bench_hydra import write_runs
    from step_bytecodes import opcode_tracer

    from xdoe.execution import _hooks

    _hooks.LIVE_SECONDS = _hooks.HEARTBEAT_SECONDS = math.inf
    counts: collections.Counter[tuple[str, str]] = collections.Counter()

    def xdoe_frame(frame: FrameType) -> FrameType:
        """The nearest frame of xdoe's own code (a library's bytecodes count for its xdoe caller)."""
        owner: FrameType | None = frame
        while owner is not None and "/xdoe/" not in owner.f_code.co_filename:
            owner = owner.f_back
        return owner if owner is not None else frame

    tracer = opcode_tracer(counts, xdoe_frame)

    with tempfile.TemporaryDirectory(prefix="xdoe-run-bytecodes-") as name:
        tmp = Path(name)
        write_runs(tmp / "all", 1)
        paths = sorted((tmp / "all").glob("run-*.yaml"))
        campaign(tmp / "warm", paths[-1:])  # imports and first-use work outside the count
        found = []
        for n in (1, args.runs):
            counts.clear()
            campaign(tmp / f"runs-{n}", paths[:n], tracer)
            found.append(dict(counts))
    one, many = found
    extra = args.runs - 1
    per = {key: (many.get(key, 0) - one.get(key, 0)) / extra for key in one.keys() | many.keys()}
    print(f"bytecodes per one-episode run ({args.runs} runs - 1 run, / {extra}): {sum(per.values()):,.0f}")
    for (file, function), value in sorted(per.items(), key=lambda item: -item[1])[:args.top]:
        print(f"  {value:10,.0f}  {file}:{function}")


if __name__ == "__main__":
    main()
