"""The hostile-document corpus (tests/hostile/cases.py) as real processes.

Run: ``python benchmarks/bench_hostile.py [--only xgen|xrun] [--match NAME] [--limit SECONDS]``.
Runs every case through the installed command lines (``xgen generate``,
``xgen check``, ``xrun experiment-check``, ``xrun experiment-start``) in a
fresh temporary folder, each as its own ``python`` process, and prints per
case the exit code, wall time and peak memory of the child (resident set,
from ``resource.getrusage``) against the reference: exit 2, one line, under
5 s (the issue-10 target, interpreter start included), nothing written.
Ends with the counts and the slowest case; exit 1 when a case misses the
target.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from hostile.cases import Case, materialize, xgen_cases, xrun_cases  # noqa: E402

XGEN = "from xdoe.cli._xgen import main; main()"
XRUN = "from xdoe.cli._xrun import main; main()"


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(tool: str, command: str, case: Case, limit: float) -> tuple[bool, float, float, str]:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        path, args = materialize(case, tmp)
        if command == "generate" and "-o" not in args:
            args += ["-o", str(tmp / "out")]
        if command == "experiment-start":
            args += ["--store", f"sqlite:///{tmp / 'store.sqlite'}", "--results", str(tmp / "results"), "-q"]
        before = _snapshot(tmp)
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        start, cpu = time.perf_counter(), _children_cpu()
        proc = subprocess.run([sys.executable, "-c", XGEN if tool == "xgen" else XRUN, command, str(path), *args],
                              capture_output=True, text=True, cwd=tmp, env=env, timeout=300)
        elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
        output = (proc.stdout + proc.stderr).strip()
        expected_exit = case.start_exit if command == "experiment-start" else 2
        ok = (proc.returncode == expected_exit and len(output.splitlines()) == 1 and "Traceback" not in output
              and case.expect in output and elapsed < limit
              and (expected_exit != 2 or _snapshot(tmp) == before))
        return ok, elapsed, cpu, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["xgen", "xrun"])
    parser.add_argument("--limit", type=float, default=5.0, help="seconds per case (reference 5)")
    parser.add_argument("--match", default="", help="only cases whose name contains this")
    opts = parser.parse_args()
    jobs = []
    if opts.only in (None, "xgen"):
        jobs += [("xgen", cmd, c) for c in xgen_cases() for cmd in ("generate", "check")
                 if not (cmd == "check" and c.args[:1] == ("-o",))]
    if opts.only in (None, "xrun"):
        jobs += [("xrun", cmd, c) for c in xrun_cases() for cmd in ("experiment-check", "experiment-start")]
    jobs = [job for job in jobs if opts.match in job[2].name]
    times: list[tuple[float, str]] = []
    cpus: list[tuple[float, str]] = []
    failed = []
    for tool, command, case in jobs:
        ok, elapsed, cpu, output = run_case(tool, command, case, opts.limit)
        label = f"{tool} {command} {case.name}"
        times.append((elapsed, label))
        cpus.append((cpu, label))
        print(f"{'ok  ' if ok else 'FAIL'} {elapsed:6.2f} s wall {cpu:6.2f} s cpu  {label}")
        if not ok:
            failed.append(label)
            print(f"      {output[:300]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    slowest = max(times)
    print(f"\n{len(jobs)} invocations ({len({(t, c.name) for t, _, c in jobs})} cases): "
          f"{len(jobs) - len(failed)} ok, {len(failed)} failed; slowest {slowest[0]:.2f} s ({slowest[1]}), "
          f"reference < {opts.limit:g} s; median {sorted(t for t, _ in times)[len(times) // 2]:.2f} s; "
          f"peak child memory {peak:.0f} MiB; most CPU time (user+sys) {max(cpus)[0]:.2f} s ({max(cpus)[1]})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
