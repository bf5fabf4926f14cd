"""Where the CPU of a one-step ``xrun experiment-start`` goes (issue 16): the
instructions of the whole process, counted by ``valgrind --tool=callgrind``
(independent of the machine's load), for a chain of ever larger prefixes of
what the run does:

1. ``python -c pass``;
2. + each library the run path imports, one by one (click, ruamel.yaml,
   pydantic, numpy, gymnasium, SQLAlchemy Core with the SQLite dialect);
3. + xdoe's own modules the run imports (found by running it once);
4. the whole run, ``--in-process --no-laydown`` (one process: the count is complete).

Each step's own cost is its difference to the step before; seconds are the
instructions at the rate of ``python -c pass`` timed here (CPU per
instruction of start-up code). xdoe's bytecode is compiled first, as
``bench_startup.py`` does. The last line is issue 35's figure: the whole run over
the import floor (``python -c pass`` + the libraries), target at most 1.3. Needs ``valgrind``.

Usage: ``python benchmarks/startup_budget.py [--openblas-threads N]``
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_startup import FLOOR_TARGET, LIBRARIES, XRUN, one_step_run  # noqa: E402
LISTED = """
import sys
from xdoe.cli._xrun import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(" ".join(sorted(m for m in sys.modules if m.startswith("xdoe"))))
print("orm" if "sqlalchemy.orm" in sys.modules else "no-orm")
"""


def instructions(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          capture_output=True, text=True, env=env, cwd=cwd)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    return int(found.group(1))


def cpu_of_pass(rounds: int = 15) -> float:
    times = []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openblas-threads", default=None, help="OPENBLAS_NUM_THREADS for every step")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    import xdoe

    # bytecode compiled first, as an installed package has it (with PYTHONDONTWRITEBYTECODE=1
    # nothing else writes it, and a stale .pyc means compiling the module in every process)
    compileall.compile_dir(Path(xdoe.__file__).parent, quiet=1)
    env = dict(os.environ)
    if args.openblas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = str(args.openblas_threads)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="xdoe-budget-") as d:
        tmp = Path(d)
        from ruamel.yaml import YAML

        with open(tmp / "one.yaml", "w") as fh:
            YAML().dump(one_step_run(), fh)

        def run_args(name: str) -> list[str]:
            return ["experiment-start", str(tmp / "one.yaml"), "--quiet", "--no-laydown", "--in-process",
                    "--store", f"sqlite:///{tmp / (name + '.sqlite')}", "--results", str(tmp / name)]

        listed = subprocess.run([py, "-c", LISTED, *run_args("list")], capture_output=True, text=True,
                                env=env, cwd=tmp, check=True).stdout.splitlines()
        xdoe_modules, orm = listed[-2].split(), listed[-1]
        steps: list[tuple[str, list[str]]] = [("python -c pass", [py, "-c", "pass"])]
        code = ""
        for name, statement in LIBRARIES:
            code += statement + "\n"
            steps.append((f"+ {name}", [py, "-c", code]))
        code += "".join(f"import {m}\n" for m in xdoe_modules)
        steps.append((f"+ xdoe's modules ({len(xdoe_modules)})", [py, "-c", code]))
        steps.append(("+ the run (whole process)", [py, "-c", XRUN, *run_args("run")]))
        counts = [instructions(argv, env, tmp) for _, argv in steps]
    rate = cpu_of_pass() / counts[0]
    print(f"{'step':36s} {'instructions':>13s} {'own':>9s} {'own CPU':>9s}   (sqlalchemy.orm loaded by the run: "
          f"{orm == 'orm'}; load {os.getloadavg()[0]:.2f})")
    previous = 0
    for (name, _), count in zip(steps, counts):
        own = count - previous
        print(f"{name:36s} {count / 1e9:11.3f} G {own / 1e9:7.3f} G {own * rate * 1000:7.0f} ms")
        previous = count
    print(f"total {counts[-1] / 1e9:.3f} G = {counts[-1] / counts[0]:.1f} x python -c pass "
          f"(~{counts[-1] * rate:.2f} s CPU at {rate * 1e9 * 1000:.0f} ms per G)")
    floor = counts[len(LIBRARIES)]  # python -c pass + every library
    print(f"one-step run / import floor (the libraries): {counts[-1] / floor:.3f} x  target <= {FLOOR_TARGET} "
          "(issue 35)")


if __name__ == "__main__":
    main()
