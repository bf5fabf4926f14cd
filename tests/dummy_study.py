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


def one_phase_study(uid: str, environment: dict[str, Any], factors: dict[str, Any], design: Any, *,
                    seed: int = 7, repetitions: int = 1, episodes: int = 1) -> dict[str, Any]:
    """A one-phase study of a random agent (the built-in dummy brain and
    muscle, the reward as objective) in the environment ``environment`` (its
    ``{"name", "uid", "params"}``): ``episodes`` test episodes per run, each
    ended by the environment, the run by its episodes."""
    key = environment["uid"]
    return {
        "uid": uid, "seed": seed, "repetitions": repetitions, "design": design, "factors": factors,
        "definitions": {
            "environments": {key: {"environment": environment}},
            "agents": {"random": {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                                  "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                                  "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}},
            "simulation": {"v": {"name": "xdoe.simulation:VanillaSimController",
                                 "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]}},
            "phase_config": {"test": {"mode": "test", "worker": 1, "episodes": episodes}},
            "run_config": {"condition": {"name": "xdoe.conditions:MaxEpisodesTerminationCondition"}},
        },
        "schedule": [{"testing": {"environments": [[key]], "agents": [["random"]], "simulation": ["v"],
                                  "phase_config": ["test"]}}],
    }


def known_truth_study(uid: str, function: str, factors: dict[str, Any], design: Any, *,
                      params: dict[str, Any] | None = None, noise: float = 1.0, **study: Any) -> dict[str, Any]:
    """:func:`one_phase_study` of :class:`~xdoe.components.environments.FunctionEnvironment`
    (uid ``f``) paying ``function(**params)`` plus N(0, ``noise``^2) at the one
    step of each episode; ``params`` default: every factor as ``${name}``;
    ``study``: :func:`one_phase_study`'s keywords."""
    params = {name: "${" + name + "}" for name in factors} if params is None else params
    environment = {"name": "xdoe.components.environments:FunctionEnvironment", "uid": "f",
                   "params": {"function": function, **params, "noise": noise}}
    return one_phase_study(uid, environment, factors, design, **study)
