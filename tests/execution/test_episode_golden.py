"""Everything a Taxi run stores at its episodes' ends, pinned against a golden
made by the code before the episode boundary was made cheaper (issue 16):
the episode rows (extras included), ``episodes.jsonl`` byte for byte (wall
times aside), the average-reward CSVs and the checkpoints.

Regenerate (only on purpose, from code known to be right):
``PYTHONPATH=src python tests/execution/test_episode_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
import tempfile
from pathlib import Path


GOLDEN = Path(__file__).parent / "data" / "taxi_episode_golden.json"
QL = {"brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5, "gamma": 0.95}},
      "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.2}},
      "objective": {"name": "xdoe.agents:RewardObjective"}}


def _phase(mode: str, episodes: int, worker: int, conditions: list, limit: int = 60, **config) -> dict:
    return {
        "environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                                          "params": {"env_id": "Taxi-v4", "max_episode_steps": limit}}}],
        "agents": [{"name": "learner", **QL}],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": conditions},
        "phase_config": {"mode": mode, "worker": worker, "episodes": episodes, **config},
    }


DOCUMENT = {"uid": "golden-taxi", "experiment_uid": "golden", "seed": 11, "schedule": [
    {"training": _phase("train", 40, 1, [{"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                                         {"name": "xdoe.conditions:MaxStepsTerminationCondition",
                                          "params": {"phase_steps": 4010}}], limit=200,
                        checkpoint_every=1000)},
    {"pairs": _phase("train", 6, 2, [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}])},
    {"testing": _phase("test", 5, 1, [])},
]}
_WALL = re.compile(r', "wall_time": [^,}]*')


def stored(folder: Path) -> dict:
    """sha256 and size of each thing the run stored (wall times aside)."""
    from xdoe.execution import run
    from xdoe.store import Store

    with Store(f"sqlite:///{folder / 'store.sqlite'}") as store:
        result = run(DOCUMENT, store=store, results=folder / "results", store_steps="none")
        assert result.ok, result.traceback
        checkpoints = sorted([c.agent, c.step, c.episode, c.sha256] for c in store.checkpoints.of_instance(result.instance_id))
    with sqlite3.connect(folder / "store.sqlite") as con:
        rows = con.execute("SELECT p.name, e.worker, e.episode, e.agent, e.steps, e.reward, e.objective, "
                           "e.extras FROM episode e JOIN phase p ON p.id = e.phase_id ORDER BY e.id").fetchall()
    out = Path(result.results_dir)
    parts = {"rows": json.dumps(rows).encode(),
             "episodes.jsonl": _WALL.sub("", (out / "episodes.jsonl").read_text(encoding="utf-8")).encode(),
             "checkpoints": json.dumps(checkpoints).encode()}
    for path in sorted(out.glob("*.csv")):
        parts[path.name] = path.read_bytes()
    return {name: [hashlib.sha256(data).hexdigest(), len(data)] for name, data in parts.items()}


def test_taxi_run_stores_what_the_golden_holds(tmp_path):
    assert stored(tmp_path) == json.loads(GOLDEN.read_text())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        GOLDEN.write_text(json.dumps(stored(Path(d)), indent=1, sort_keys=True) + "\n")
    sys.stdout.write(GOLDEN.read_text())
