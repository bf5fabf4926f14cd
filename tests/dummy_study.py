"""A minimal experiment document over DummyEnvironment whose every factor is
an environment parameter: the design tests' common study (tests/design,
tests/analysis import it; ``pythonpath = ["tests"]``)."""

from __future__ import annotations

from typing import Any


def dummy_study(uid: str, seed: int, design: Any, factors: dict[str, Any], **top: Any) -> dict[str, Any]:
    """The document (plain data): one test phase of one episode, a random
    agent, each factor passed to the environment as ``${name}``; ``top``
    adds top-level keys (``output``...)."""
    return {
        "uid": uid, "seed": seed, **top, "design": design, "factors": factors,
        "definitions": {
            "environments": {"e": {"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
                                                   "params": {"length": 3, **{n: "${" + n + "}" for n in factors}}}}},
            "agents": {"r": {"name": "r", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                             "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                             "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}},
            "simulation": {"v": {"name": "xdoe.simulation:VanillaSimController"}},
            "phase_config": {"t": {"mode": "test", "worker": 1, "episodes": 1}},
        },
        "schedule": [{"p": {"environments": [["e"]], "agents": [["r"]], "simulation": ["v"],
                            "phase_config": ["t"]}}],
    }
