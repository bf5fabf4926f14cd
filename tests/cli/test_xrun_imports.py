"""What ``xrun experiment-start`` imports for a plain gymnasium run (its start-up time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

WRAPPER = """
import sys
from xdoe.cli._xrun import main
try:
    main(["experiment-start", sys.argv[1], "--store", sys.argv[2], "--results", sys.argv[3], "--quiet"])
except SystemExit as exc:
    assert not exc.code, exc.code
unneeded = ("rich", "xdoe.documents._experiment", "xdoe.documents._experiment_models", "xdoe.session", "xdoe.store.views._export",
            "xdoe.store.views._status", "xdoe.store.views._lineage", "xdoe.components.environments._dummy",
            "xdoe.components.environments._tictactoe", "xdoe.components.agents._dummy", "dask", "distributed", "pyarrow", "psycopg", "pandas", "statsmodels",
            "xdoe.analysis._effects")
print(",".join(m for m in unneeded if m in sys.modules) or "clean")
"""


def _taxi_run(tmp_path: Path, uid: str, seed: int, episodes: int) -> Path:
    """A one-phase Taxi Q-learning run document, written to ``tmp_path``."""
    document = {
        "uid": uid, "seed": seed,
        "schedule": [{"training": {
            "environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment",
                                              "uid": "taxi", "params": {"env_id": "Taxi-v4"}}}],
            "agents": [{"name": "learner", "brain": {"name": "xdoe.agents:QLearningBrain", "params": {}},
                        "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {}},
                        "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
            "phase_config": {"mode": "train", "worker": 1, "episodes": episodes},
        }}],
    }
    path = tmp_path / f"run-{uid}.yaml"
    with open(path, "w") as fh:
        YAML().dump(document, fh)
    return path


def test_quiet_run_imports_nothing_it_does_not_use(tmp_path: Path) -> None:
    path = _taxi_run(tmp_path, "imports", 1, 1)
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(path), f"sqlite:///{tmp_path / 's.sqlite'}", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "clean"


PARENT = """
import sys
from xdoe.cli._xrun import main
try:
    main(["experiment-start", *sys.argv[3:], "--store", sys.argv[1], "--results", sys.argv[2], "--quiet", "--jobs", "2",
          "--no-laydown"])  # drawing a new run structure's laydown.svg takes matplotlib (and numpy)
except SystemExit as exc:
    assert not exc.code, exc.code
heavy = ("numpy", "gymnasium", "xdoe.environment", "xdoe.execution._runner", "xdoe.execution._worker", "matplotlib")
print(",".join(m for m in heavy if m in sys.modules) or "clean")
"""


def test_the_parent_of_a_jobs_campaign_loads_no_executor(tmp_path: Path) -> None:
    """With ``--jobs 2`` the parent only reads the documents, opens the store
    and hands out the runs: the workers' modules (numpy, gymnasium, the step
    loop) load in its forkserver, started first, in parallel (issue 26.3);
    the parent loading them too was serial start-up before the first run."""
    files = [str(_taxi_run(tmp_path, f"jobs-{seed}", seed, 2)) for seed in (1, 2, 3)]
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    proc = subprocess.run([sys.executable, "-c", PARENT, store, str(tmp_path / "r"), *files],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "clean"
    assert len(list((tmp_path / "r").glob("jobs-*/*/episodes.jsonl"))) == 3  # the workers ran them
