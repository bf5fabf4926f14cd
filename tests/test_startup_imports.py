"""Commands import only what they need (start-up time, issue 16): checked on
``sys.modules`` in a fresh interpreter after the command ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
DUMMY = ROOT / "experiments" / "dummy.yaml"  # a full factorial

LOADED = """
import sys
from xdoe.cli.{module} import main
try:
    main(sys.argv[2:])
except SystemExit as exc:
    assert not exc.code, exc.code
heavy = {heavy!r}
print(",".join(sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy)) or "clean")
"""


def _loaded(module: str, heavy: tuple[str, ...], *args: str, cwd: Path) -> str:
    code = LOADED.format(module=module, heavy=heavy)
    proc = subprocess.run([sys.executable, "-c", code, "-", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_xgen_on_a_full_factorial_never_loads_scipy(tmp_path: Path) -> None:
    # nor the run-document models (pydantic classes built for xrun), the executor or the store
    heavy = ("scipy", "sqlalchemy", "gymnasium", "pandas", "matplotlib", "torch", "xdoe.documents._run",
             "xdoe.execution", "xdoe.store")
    # check needs no numpy either: a full factorial's rows are computed without its array
    assert _loaded("_xgen", (*heavy, "numpy"), "check", str(DUMMY), cwd=tmp_path) == "clean"
    assert _loaded("_xgen", heavy, "generate", str(DUMMY), "--dry-run", "-o", str(tmp_path / "o"),
                   cwd=tmp_path) == "clean"
    assert _loaded("_xgen", heavy, "generate", str(DUMMY), "-q", "-o", str(tmp_path / "o"), cwd=tmp_path) == "clean"
    assert (tmp_path / "o" / "manifest.json").is_file()


def test_import_design_loads_no_scipy() -> None:
    code = "import sys, xdoe.design; print(sorted(m for m in sys.modules if m.startswith(('scipy', 'xdoe.design.'))))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_experiment_start_loads_no_analysis_stack(tmp_path: Path) -> None:
    run = {
        "uid": "one-step", "seed": 3,
        "schedule": [{"training": {
            "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
                                              "params": {"length": 1}}}],
            "agents": [{"name": "random", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "train", "episodes": 1}}}],
    }
    path = tmp_path / "run.yaml"
    with open(path, "w") as fh:
        YAML().dump(run, fh)
    heavy = ("pandas", "statsmodels", "torch", "scipy", "rich", "dask", "pyarrow", "psycopg", "stable_baselines3",
             "psutil")
    store = ("--store", f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r"))
    got = _loaded("_xrun", heavy, "experiment-start", str(path), "--quiet", *store, cwd=tmp_path)
    assert got == "clean"
    # in this process (--in-process): matplotlib only to draw a structure not drawn before
    heavy = (*heavy, "matplotlib")
    assert _loaded("_xrun", heavy, "experiment-start", str(path), "--quiet", "--in-process", "--rerun", *store,
                   cwd=tmp_path) == "clean"
    assert len(list((tmp_path / "r").glob("one-step/*/laydown.svg"))) == 2
    assert _loaded("_xrun", heavy, "experiment-start", str(path), "--quiet", "--in-process", "--rerun",
                   "--no-laydown", "--store", f"sqlite:///{tmp_path / 's2.sqlite'}", "--results",
                   str(tmp_path / "r2"), cwd=tmp_path) == "clean"
    assert not list((tmp_path / "r2").glob("*/*/laydown.svg"))


def test_xgen_starts_numpy_without_a_blas_thread_pool(tmp_path: Path) -> None:
    """OpenBLAS's threads cost more start-up CPU than xgen's small arrays gain;
    a value the user set is kept."""
    code = ("import os, sys\nfrom xdoe.cli._xgen import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    for given, expected in ((None, "1"), ("3", "3")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        proc = subprocess.run([sys.executable, "-c", code, "check", str(DUMMY)], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().splitlines()[-1] == expected
