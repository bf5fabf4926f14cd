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

from dummy_study import one_phase_study

#: experiment uid -> its two levels of ``length`` (the objective grows with it)
EXPERIMENTS = {"alpha-study": [2, 6], "beta-study": [3, 5], "gamma-study": [4, 7]}
REPETITIONS = 2
EPISODES = 2


def document(uid: str, lengths: list[int]) -> dict[str, Any]:
    """A two-point experiment of the built-in dummy components."""
    environment = {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
                   "params": {"length": "${length}", "sensors": 2, "actuators": 1}}
    return one_phase_study(uid, environment, {"length": {"levels": lengths}}, "full_factorial", seed=3,
                           repetitions=REPETITIONS, episodes=EPISODES)


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
