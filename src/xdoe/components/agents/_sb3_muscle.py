"""The acting side of :class:`xdoe.components.agents.SB3Brain`."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.agent import Mode, Muscle
from xdoe.components.agents._sb3_common import OwnRandomState
from xdoe.components.agents._sb3_spaces import ActionCodec, ObservationCodec, mask_for
from xdoe.environment import ActuatorInformation, SensorInformation

__all__ = ["SB3Muscle"]


class SB3Muscle(Muscle):
    """Acts with the current policy of its :class:`~xdoe.components.agents.SB3Brain`.

    Parameters:
        uid: the agent name.
        seed: seeds :attr:`rng` (exploration draws) and the muscle's own torch
            generator (sampling from the policy's distribution), kept apart
            from the process's global generators.

    Train mode: on-policy algorithms sample from the policy's distribution
    (SB3's ``policy(obs)``) and attach the value estimate and log-probability
    to the experience (:attr:`extras`); ``Discrete``-action off-policy
    algorithms (DQN...) act epsilon-greedily with the brain's current
    ``exploration_rate``, continuous ones sample SB3's actor and add the
    brain's ``action_noise``; before ``learning_starts`` off-policy muscles act
    uniformly at random, as SB3 does. Test mode: deterministic actions
    (SB3's ``deterministic=True``), no exploration.

    Action masks: with a single ``Discrete`` actuator ``<prefix>.action`` and
    a sensor ``<prefix>.action_mask`` (PettingZoo's convention), only allowed
    actions are taken (random draws among them; on-policy sampling from the
    policy's probabilities renormalised over them; greedy choices the best
    allowed one). The log-probability sent to the brain is the unmasked
    policy's, the one SB3's loss evaluates.
    """

    def __init__(self, uid: str, seed: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.random: OwnRandomState | None = None
        self.policy: Any = None
        self.kind = "on"
        self.epsilon = 0.0
        self.warmup = False
        self.noise: float | None = None
        self._device: Any = None
        self._shape: tuple[int, ...] | None = None

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        self.observations = ObservationCodec(sensors)
        self.actions = ActionCodec(actuators)
        self._space = copy.deepcopy(self.actions.space)
        self._space.seed(int(self.rng.integers(2**31 - 1)))
        self.random = OwnRandomState(int(self.rng.integers(2**63 - 1)))

    def update(self, update: Any) -> None:
        if not isinstance(update, dict):
            return
        policy = update.get("policy", self.policy)
        if policy is not self.policy:
            self.policy = policy
            self._tensor_layout(policy)
        self.kind = update.get("kind", self.kind)
        self.epsilon = float(update.get("epsilon", self.epsilon))
        self.warmup = bool(update.get("warmup", self.warmup))
        self.noise = update.get("noise", self.noise)

    def _tensor_layout(self, policy: Any) -> None:
        """What :meth:`_obs` needs of a new policy, looked up once rather than per step."""
        from stable_baselines3.common.preprocessing import is_image_space

        self._device = policy.device  # SB3 finds it by walking the parameters
        space = policy.observation_space
        plain = isinstance(space, spaces.Space) and not isinstance(space, spaces.Dict) and not is_image_space(space)
        self._shape = (-1, *space.shape) if plain else None

    def _obs(self, sensors: list[SensorInformation]) -> Any:
        """The sensors as a batch of one observation tensor on the policy's
        device: SB3's ``policy.obs_to_tensor`` (whose result it is, the same
        copy, dtype and shape) without the per-call device and shape look-ups,
        as SB3's ``collect_rollouts`` does; dict and image observations go
        through ``obs_to_tensor`` itself."""
        import torch

        observation = self.observations.encode(sensors)
        if self._shape is None:
            return self.policy.obs_to_tensor(observation)[0]
        return torch.as_tensor(np.array(observation).reshape(self._shape), device=self._device)

    def _random(self, mask: np.ndarray | None) -> Any:
        if mask is not None:
            return int(self.rng.choice(np.flatnonzero(mask)))
        return self._space.sample()

    def propose_actions(
        self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]
    ) -> list[ActuatorInformation]:
        if self.policy is None or self.random is None:
            raise RuntimeError("SB3Muscle has no policy: its brain must be an SB3Brain")
        import torch

        test = self.mode is Mode.TEST
        mask = mask_for(actuators, sensors)
        policy = self.policy
        self.extras = None
        if self.kind == "on":
            action = self._on_policy(policy, sensors, mask, test, torch)
        elif not test and self.warmup:
            action = self._random(mask)
        elif self.kind == "discrete":
            if not test and self.rng.random() < self.epsilon:
                action = self._random(mask)
            else:
                obs = self._obs(sensors)
                with torch.no_grad():
                    if mask is not None and hasattr(policy, "q_net"):
                        q = policy.q_net(obs)[0].cpu().numpy()
                        action = int(np.argmax(np.where(mask, q, -np.inf)))
                    else:
                        action = int(policy._predict(obs, deterministic=True).reshape(-1)[0])
        else:
            action = self._predict(policy, sensors, test, torch)
            if not test and self.noise:
                scaled = policy.scale_action(np.asarray(action, dtype=np.float32))
                scaled = np.clip(scaled + self.rng.normal(0.0, self.noise, scaled.shape), -1.0, 1.0)
                action = policy.unscale_action(scaled)
        return self.actions.split(action)

    def _predict(self, policy: Any, sensors: list[SensorInformation], test: bool, torch: Any) -> Any:
        """SB3's ``policy.predict(obs, deterministic=test)`` for one observation
        (the same draws from the muscle's torch generator, the same clipping or
        unscaling), with the observation tensor of :meth:`_obs`."""
        assert self.random is not None
        if self._shape is None:
            with torch.no_grad(), self.random.active(numpy=False):
                return policy.predict(self.observations.encode(sensors), deterministic=test)[0]
        if policy.training:
            policy.set_training_mode(False)
        obs = self._obs(sensors)
        with torch.no_grad(), self.random.active(numpy=False):
            actions = policy._predict(obs, deterministic=test)
        space = policy.action_space
        action = actions.cpu().numpy().reshape(space.shape)
        if isinstance(space, spaces.Box):
            return policy.unscale_action(action) if policy.squash_output else np.clip(action, space.low, space.high)
        return action

    def _on_policy(self, policy: Any, sensors: list[SensorInformation], mask: np.ndarray | None,
                   test: bool, torch: Any) -> Any:
        obs = self._obs(sensors)
        assert self.random is not None
        with torch.no_grad():
            if mask is None:
                if test:
                    actions = policy._predict(obs, deterministic=True)
                    values = log_prob = None
                else:
                    with self.random.active(numpy=False):
                        actions, values, log_prob = policy(obs)
                raw = actions.cpu().numpy()[0]
            else:
                distribution = policy.get_distribution(obs)
                probs = distribution.distribution.probs[0].cpu().numpy().astype(np.float64)
                allowed = np.where(mask, probs, 0.0)
                if test:
                    raw = np.asarray(int(np.argmax(np.where(mask, probs, -1.0))))
                elif allowed.sum() > 0:
                    raw = np.asarray(int(self.rng.choice(len(probs), p=allowed / allowed.sum())))
                else:
                    raw = np.asarray(self._random(mask))
                values = policy.predict_values(obs)
                log_prob = distribution.log_prob(torch.as_tensor(raw[None]).to(obs.device))
        if values is not None:
            self.extras = {"value": values.item(), "log_prob": log_prob.item()}
        space = self.actions.space
        if isinstance(space, spaces.Box):
            if self.extras is not None:
                self.extras["action"] = raw.tolist()
            if policy.squash_output:
                return policy.unscale_action(raw)
            return np.clip(raw, space.low, space.high)
        return raw
