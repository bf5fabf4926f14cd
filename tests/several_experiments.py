"""A real SQLite store holding three experiments (issue 32 item 6): the
tests of ``xdoe.results`` and ``xdoe.analysis`` check that nothing pools
them (tests/test_results.py, tests/analysis/test_one_experiment.py;
``pythonpath = ["tests"]``).

Each experiment is two design points (``length`` 2 and 6, or 3 and 5...)
x 2 repetitions of the built-in dummy components, run by the real executor
into ``xrun.sqlite``; the three share design point indices 0 and 1, so a
pooled analysis would mix three experiments' "point 0".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: experiment uid -> its two levels of ``length`` (the objective grows with it)
EXPERIMENTS = {"alpha-study": [2, 6], "beta-study": [3, 5], "gamma-study": [4, 7]}
REPETITIONS = 2
EPISODES = 2


def document(uid: str, lengths: list[int]) -> dict[str, Any]:
    """A two-point experiment of the built-in dummy components."""
    return {
        "uid": uid, "seed": 3, "repetitions": REPETITIONS, "design": "full_factorial",
        "factors": {"length": {"levels": lengths}},
        "definitions": {
            "environments": {"env": {"environment": {
                "name": "xdoe.environments:DummyEnvironment", "uid": "env",
                "params": {"length": "${length}", "sensors": 2, "actuators": 1}}}},
            "agents": {"random": {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                                  "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                                  "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}},
            "simulation": {"v": {"name": "xdoe.simulation:VanillaSimController",
                                 "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]}},
            "phase_config": {"test": {"mode": "test", "worker": 1, "episodes": EPISODES}},
            "run_config": {"condition": {"name": "xdoe.conditions:MaxEpisodesTerminationCondition"}},
        },
        "schedule": [{"testing": {"environments": [["env"]], "agents": [["random"]], "simulation": ["v"],
                                  "phase_config": ["test"]}}],
    }


def build_store(folder: Path, experiments: dict[str, list[int]] | None = None) -> str:
    """Generate ``experiments`` (default :data:`EXPERIMENTS`) into
    ``folder`` and run every run into ``folder/xrun.sqlite``; the store URL."""
    from xdoe.design.runfiles import generate
    from xdoe.execution import run
    from xdoe.store import Store

    folder.mkdir(parents=True, exist_ok=True)
    for uid, lengths in (experiments or EXPERIMENTS).items():
        generate(document(uid, lengths), folder / uid)
    url = f"sqlite:///{folder / 'xrun.sqlite'}"
    with Store(url) as store:
        for path in sorted(folder.glob("*/run-*.yaml")):
            result = run(path, store=store, results=folder / "results")
            assert result.ok, result.error
    return url
