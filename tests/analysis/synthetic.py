"""A synthetic campaign with known effects, for testing the analysis.

:class:`FormulaEnvironment` pays, at the one step of each episode,

    reward = 10 * strong + 0 * null + 6 * strong * inter + N(0, 1)

with the noise drawn from the environment's seeded rng. The experiment has
three named factors ``strong``, ``null``, ``inter`` (levels 0 and 1), so the
true mean of every design point is known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymnasium import spaces

from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

EPISODES = 16
REPETITIONS = 3
NOISE = 1.0


def truth(strong: int, null: int, inter: int) -> float:
    """The true mean reward of a design point."""
    return 10.0 * strong + 0.0 * null + 6.0 * strong * inter


class OneStepEnvironment(Environment):
    """One-step episodes paying ``mean`` plus N(0, ``noise``^2), the noise
    from the environment's seeded rng (subclasses set both)."""

    mean = 0.0
    noise = 0.0

    def _sensors(self) -> list[SensorInformation]:
        return [SensorInformation(self.full_id("s"), spaces.Discrete(2), 0)]

    def start_environment(self) -> EnvironmentBaseline:
        return EnvironmentBaseline(sensors=self._sensors(),
                                   actuators=[ActuatorInformation(self.full_id("a"), spaces.Discrete(2))])

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        reward = self.mean + self.noise * float(self.rng.standard_normal())
        return EnvironmentState(sensors=self._sensors(),
                                rewards=[RewardInformation(self.full_id("reward"), reward)], done=True)


class FormulaEnvironment(OneStepEnvironment):
    """One-step episodes paying :func:`truth` plus N(0, ``noise``)."""

    def __init__(self, uid: str, seed: int, strong: int = 0, null: int = 0, inter: int = 0,
                 noise: float = NOISE) -> None:
        super().__init__(uid=uid, seed=seed)
        self.mean = truth(strong, null, inter)
        self.noise = float(noise)


def document(repetitions: int = REPETITIONS) -> dict[str, Any]:
    """The experiment document (plain data)."""
    return {
        "uid": "synthetic", "seed": 7, "repetitions": repetitions, "design": "full_factorial",
        "factors": {"strong": {"levels": [0, 1]}, "null": {"levels": [0, 1]}, "inter": {"levels": [0, 1]}},
        "definitions": {
            "environments": {"f": {"environment": {"name": "synthetic:FormulaEnvironment", "uid": "f", "params": {
                "strong": "${strong}", "null": "${null}", "inter": "${inter}"}}}},
            "agents": {"random": {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                                  "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                                  "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}},
            "simulation": {"v": {"name": "xdoe.simulation:VanillaSimController",
                                 "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]}},
            "phase_config": {"test": {"mode": "test", "worker": 1, "episodes": EPISODES}},
            "run_config": {"condition": {"name": "xdoe.conditions:MaxEpisodesTerminationCondition"}},
        },
        "schedule": [{"testing": {"environments": [["f"]], "agents": [["random"]], "simulation": ["v"],
                                  "phase_config": ["test"]}}],
    }


def run_campaign(folder: Path) -> dict[str, Any]:
    """Generate and run the campaign into ``folder`` (store ``xrun.sqlite``
    there) as users do, with ``xrun experiment-start`` (in this process; it
    also puts each run's ``laydown.svg`` into its results folder)."""
    from click.testing import CliRunner

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate

    out = folder / "_outputs"
    generate(document(), out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    files = sorted(out.glob("run-*.yaml"))
    done = CliRunner().invoke(main, ["experiment-start", str(out), "--quiet", "--in-process", "--store", url,
                                     "--results", str(out / "results")])
    assert done.exit_code == 0, done.output
    return {"dir": out, "store": url, "runs": files}
