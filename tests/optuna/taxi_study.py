"""A small Taxi study for the adaptive-design tests (issue 37): tabular
Q-learning on Gymnasium's Taxi over ``alpha`` (learning rate) and
``epsilon`` (exploration), a training phase of ``episodes`` episodes of at
most 60 steps, then 10 test episodes."""

from __future__ import annotations

from typing import Any

UID = "taxiopt"


def document(design: Any, *, seed: int = 7, repetitions: int = 2, episodes: int = 400,
             prune: dict[str, Any] | None = None, factors: dict[str, Any] | None = None) -> dict[str, Any]:
    """The experiment document (plain data); ``prune``: its ``run_config.prune``."""
    run_config: dict[str, Any] = {"condition": {"name": "xdoe.conditions:MaxEpisodesTerminationCondition",
                                                "params": {}}}
    if prune is not None:
        run_config["prune"] = prune
    return {
        "uid": UID, "seed": seed, "repetitions": repetitions, "design": design,
        "factors": factors or {"alpha": {"range": [0.02, 0.9], "scale": "log"},
                               "epsilon": {"range": [0.01, 0.5], "scale": "log"}},
        "definitions": {
            "environments": {"taxi": {"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                                                      "params": {"env_id": "Taxi-v4", "max_episode_steps": 60}}}},
            "agents": {"learner": {"name": "learner",
                                   "brain": {"name": "xdoe.agents:QLearningBrain",
                                             "params": {"alpha": "${alpha}", "gamma": 0.99}},
                                   "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": "${epsilon}"}},
                                   "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}},
            "sensors": {"all": {"taxi": ["observation"]}},
            "actuators": {"all": {"taxi": ["action"]}},
            "simulation": {"vanilla": {"name": "xdoe.simulation:VanillaSimController",
                                       "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition",
                                                       "params": {}}]}},
            "phase_config": {"train": {"mode": "train", "worker": 1, "episodes": episodes},
                             "test": {"mode": "test", "worker": 1, "episodes": 10}},
            "run_config": run_config,
        },
        "schedule": [{"training": {"environments": [["taxi"]], "agents": [["learner"]],
                                   "sensors": {"learner": ["all"]}, "actuators": {"learner": ["all"]},
                                   "simulation": ["vanilla"], "phase_config": ["train"]}},
                     {"testing": {"phase_config": ["test"]}}],
    }


def conditional_document(design: Any, *, seed: int = 7, repetitions: int = 2, episodes: int = 400,
                         prune: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`document` with a branch: the agent is the named schedule factor
    ``explore``, ``learner`` (exploring with ``epsilon``) or ``greedy`` (the
    same learner at a fixed epsilon 0.02), and ``epsilon`` is conditional
    (``when: {explore: [learner]}``)."""
    doc = document(design, seed=seed, repetitions=repetitions, episodes=episodes, prune=prune,
                   factors={"alpha": {"range": [0.02, 0.9], "scale": "log"},
                            "epsilon": {"range": [0.01, 0.5], "scale": "log", "when": {"explore": [["learner"]]}}})
    agents = doc["definitions"]["agents"]
    agents["greedy"] = {**agents["learner"], "muscle": {"name": "xdoe.agents:QLearningMuscle",
                                                        "params": {"epsilon": 0.02}}}
    doc["schedule"][0]["training"]["agents"] = {"name": "explore", "levels": [["learner"], ["greedy"]]}
    return doc
