"""The acting side of :class:`xdoe.components.agents.SB3Brain`."""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

from xdoe.agent import Mode, Muscle
from xdoe.components.agents._sb3_common import OwnRandomState
from xdoe.components.agents._sb3_spaces import ActionCodec, ObservationCodec, mask_for
from xdoe.environment import ActuatorInformation, SensorInformation, is_action_mask

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
        #: whether the current policy acts through :func:`_act_on_policy` (set by :meth:`update`)
        self._one_pass = False

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        self.observations = ObservationCodec(sensors)
        #: the id of the agent's only sensor (its value form is the observation), else None
        self._sensor = sensors[0].uid if len(sensors) == 1 else None
        #: the ids of the action-mask sensors (``mask_for`` picks the only actuator's)
        self._masks = [s.uid for s in sensors if is_action_mask(s.uid)] if len(actuators) == 1 else []
        self.actions = ActionCodec(actuators)
        self._space = copy.deepcopy(self.actions.space)
        self._space.seed(int(self.rng.integers(2**31 - 1)))
        self.random = OwnRandomState(int(self.rng.integers(2**63 - 1)))
        self._one_pass = _one_pass(self)

    def update(self, update: Any) -> None:
        if not isinstance(update, dict):
            return
        policy, kind = update.get("policy", self.policy), update.get("kind", self.kind)
        changed = policy is not self.policy or kind != self.kind
        if policy is not self.policy:
            self.policy = policy
            self._tensor_layout(policy)
        self.kind = kind
        self.epsilon = float(update.get("epsilon", self.epsilon))
        self.warmup = bool(update.get("warmup", self.warmup))
        self.noise = update.get("noise", self.noise)
        if changed:
            self._one_pass = _one_pass(self)

    def _tensor_layout(self, policy: Any) -> None:
        """What :meth:`_obs` needs of a new policy, looked up once rather than per step."""
        from stable_baselines3.common.preprocessing import is_image_space

        self._device = policy.device  # SB3 finds it by walking the parameters
        space = policy.observation_space
        plain = isinstance(space, spaces.Space) and not isinstance(space, spaces.Dict) and not is_image_space(space)
        self._shape = (-1, *space.shape) if plain else None

    def _obs(self, observation: Any) -> Any:
        """The observation (value form) as a batch of one observation tensor
        on the policy's device: SB3's ``policy.obs_to_tensor`` (whose result
        it is, the same copy, dtype and shape) without the per-call device and
        shape look-ups, as SB3's ``collect_rollouts`` does; dict and image
        observations go through ``obs_to_tensor`` itself."""
        import torch

        encoded = self.observations.encode_values(observation)
        if self._shape is None:
            return self.policy.obs_to_tensor(encoded)[0]
        return torch.as_tensor(np.array(encoded).reshape(self._shape), device=self._device)

    def _random(self, mask: np.ndarray | None) -> Any:
        if mask is not None:
            return int(self.rng.choice(np.flatnonzero(mask)))
        return self._space.sample()

    def propose_values(self, observation: Any) -> Any:
        """The action (value form) for ``observation`` (value form of the
        agent's sensors); see the class for how it is chosen.

        Raises:
            RuntimeError: no policy yet (the brain is not an SB3Brain).
        """
        if self.policy is None or self.random is None:
            raise RuntimeError("SB3Muscle has no policy: its brain must be an SB3Brain")
        if self._batchable([self]):
            return _act_on_policy([self], [observation])[0]
        import torch

        test = self.mode is Mode.TEST
        mask = mask_for(self.actuators, [SensorInformation(uid, None, observation[uid]) for uid in self._masks]) \
            if self._masks else None
        policy = self.policy
        self.extras = None
        if self.kind == "on":
            action = self._on_policy(policy, observation, mask, test, torch)
        elif not test and self.warmup:
            action = self._random(mask)
        elif self.kind == "discrete":
            if not test and self.rng.random() < self.epsilon:
                action = self._random(mask)
            else:
                obs = self._obs(observation)
                with torch.no_grad():
                    if mask is not None and hasattr(policy, "q_net"):
                        q = policy.q_net(obs)[0].cpu().numpy()
                        action = int(np.argmax(np.where(mask, q, -np.inf)))
                    else:
                        action = int(policy._predict(obs, deterministic=True).reshape(-1)[0])
        else:
            action = self._predict(policy, observation, test, torch)
            if not test and self.noise:
                scaled = policy.scale_action(np.asarray(action, dtype=np.float32))
                scaled = np.clip(scaled + self.rng.normal(0.0, self.noise, scaled.shape), -1.0, 1.0)
                action = policy.unscale_action(scaled)
        return self.actions.values(action)

    def _predict(self, policy: Any, observation: Any, test: bool, torch: Any) -> Any:
        """SB3's ``policy.predict(obs, deterministic=test)`` for one observation
        (the same draws from the muscle's torch generator, the same clipping or
        unscaling), with the observation tensor of :meth:`_obs`."""
        assert self.random is not None
        if self._shape is None:
            with torch.no_grad(), self.random.active():
                return policy.predict(self.observations.encode_values(observation), deterministic=test)[0]
        if policy.training:
            policy.set_training_mode(False)
        obs = self._obs(observation)
        with torch.no_grad(), self.random.active():
            actions = policy._predict(obs, deterministic=test)
        space = policy.action_space
        action = actions.cpu().numpy().reshape(space.shape)
        if isinstance(space, spaces.Box):
            return policy.unscale_action(action) if policy.squash_output else np.clip(action, space.low, space.high)
        return action

    def _on_policy(self, policy: Any, observation: Any, mask: np.ndarray | None,
                   test: bool, torch: Any) -> Any:
        """An on-policy action the one-pass path (:func:`_act_on_policy`) does
        not take: masked actions, or a policy or distribution it does not know."""
        obs = self._obs(observation)
        assert self.random is not None
        with torch.no_grad():
            if mask is None:
                if test:
                    actions = policy._predict(obs, deterministic=True)
                    values = log_prob = None
                else:
                    with self.random.active():
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
        return self._sampled(policy, raw, None if values is None else (values.item(), log_prob.item()))

    def _sampled(self, policy: Any, raw: np.ndarray, estimates: tuple[float, float] | None) -> Any:
        """The action of an on-policy sample ``raw`` (SB3's clipping or
        unscaling of a ``Box``), with :attr:`extras` from ``estimates``
        (value, log-probability; ``None`` in test mode)."""
        self.extras = None if estimates is None else {"value": estimates[0], "log_prob": estimates[1]}
        space = self.actions.space
        if isinstance(space, spaces.Box):
            if self.extras is not None:
                self.extras["action"] = raw.tolist()
            if policy.squash_output:
                return policy.unscale_action(raw)
            return np.clip(raw, space.low, space.high)
        return raw

    # -- batched acting (Muscle.propose_batch) ----------------------------------
    @classmethod
    def propose_batch(cls, muscles: Sequence[Muscle], observations: Sequence[Any]) -> list[Any]:
        """On-policy muscles of one agent (PPO, A2C) with SB3's actor-critic
        forward pass and one plain sensor act in one forward pass of a batch
        of ``len(muscles)`` observations, as SB3 does with a vectorised
        environment (:func:`_act_on_policy`, also the path of one muscle
        alone); each row's action is drawn from its own muscle's torch
        generator (the same draws as alone: a ``Categorical``'s
        ``multinomial`` or a diagonal Gaussian's standard normals of one row),
        so values and log-probabilities equal the muscles' own up to the
        rounding of the batched matrix products. Other cases (off-policy
        algorithms, action masks, several sensors, other distributions or
        policies) act muscle by muscle (:meth:`Muscle.propose_batch`)."""
        if not cls._batchable(muscles):
            return super().propose_batch(muscles, observations)
        return _act_on_policy(muscles, observations)

    @staticmethod
    def _batchable(muscles: Sequence[Any]) -> bool:
        """Whether :func:`_act_on_policy` can take ``muscles`` in one pass
        (see :meth:`propose_batch`; :attr:`_one_pass` is looked up once per policy)."""
        first = muscles[0]
        if not first._one_pass or first.random is None:
            return False
        policy, mode = first.policy, first.mode
        return all(m.policy is policy and m._one_pass and m.mode is mode and m.random is not None
                   for m in muscles)


def _one_pass(muscle: SB3Muscle) -> bool:
    """Whether ``muscle``'s current policy acts through :func:`_act_on_policy`:
    on-policy, SB3's own actor-critic forward pass, a categorical or diagonal
    Gaussian distribution, one plain sensor (no mask)."""
    from stable_baselines3.common.distributions import CategoricalDistribution, DiagGaussianDistribution
    from stable_baselines3.common.policies import ActorCriticPolicy

    policy = muscle.policy
    return bool(policy is not None and muscle.kind == "on" and muscle._shape is not None
                and muscle._sensor is not None and type(policy).forward is ActorCriticPolicy.forward
                and type(getattr(policy, "action_dist", None)) in (CategoricalDistribution, DiagGaussianDistribution))


def _act_on_policy(muscles: Sequence[Any], observations: Sequence[Any]) -> list[Any]:
    """The actions (value form) of on-policy ``muscles`` of one policy for
    their ``observations`` (value form of the one plain sensor), in one
    forward pass of a batch of ``len(muscles)``: SB3's ``policy(obs)`` (train
    mode: each row sampled from its muscle's own torch generator, value and
    log-probability in :attr:`SB3Muscle.extras`) or ``policy._predict(obs,
    deterministic=True)`` (test mode)."""
    import torch

    first: Any = muscles[0]
    policy = first.policy
    sensor, codec = first._sensor, first.observations
    if len(observations) == 1:
        batch = np.array(codec.value(sensor, observations[0]))
    else:
        batch = np.stack([codec.value(sensor, o) for o in observations])
    obs = torch.as_tensor(batch.reshape(first._shape), device=first._device)
    with torch.no_grad():
        if first.mode is Mode.TEST:
            raws = policy._predict(obs, deterministic=True).cpu().numpy()
            return [m.actions.values(m._sampled(policy, raw, None)) for m, raw in zip(muscles, raws)]
        distribution, values = _distribution_and_values(policy, obs)
        actions = _sample(distribution.distribution, muscles)
        # the samples are in the support by construction: torch's check of them is skipped (same values)
        distribution.distribution._validate_args = False
        log_probs = distribution.log_prob(actions).reshape(-1).tolist()
        raws = actions.reshape((-1, *policy.action_space.shape)).cpu().numpy()
    values = values.reshape(-1).tolist()
    return [m.actions.values(m._sampled(policy, raw, (value, log_prob)))
            for m, raw, value, log_prob in zip(muscles, raws, values, log_probs)]


def _distribution_and_values(policy: Any, obs: Any) -> tuple[Any, Any]:
    """SB3's ``ActorCriticPolicy.forward`` up to the sampling: the action
    distribution of the batch ``obs`` and the value estimates ``(n, 1)``."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    return policy._get_action_dist_from_latent(latent_pi), policy.value_net(latent_vf)


def _sample(distribution: Any, muscles: Sequence[Any]) -> Any:
    """One sample per row of a torch ``Categorical`` or ``Normal`` of a batch,
    row ``i`` with the draws ``sample``/``rsample`` would make for that one
    row from the torch generator of ``muscles[i]``: a ``Categorical``'s
    ``multinomial`` of one sample is ``argmax(probs / q)`` with ``q`` standard
    exponentials of the row's shape (torch's one-sample path), a ``Normal``'s
    ``loc + eps * scale`` with ``eps`` standard normals; only the draws are
    made row by row, the arithmetic for the batch at once (the same values)."""
    import torch

    if isinstance(distribution, torch.distributions.Categorical):
        probs = distribution.probs
        q = torch.empty_like(probs)
        for i, muscle in enumerate(muscles):
            q[i:i + 1].exponential_(1, generator=muscle.random.generator)
        return torch.argmax(probs / q, dim=-1)
    loc, scale = distribution.loc, distribution.scale
    eps = torch.empty_like(loc)
    for i, muscle in enumerate(muscles):
        eps[i:i + 1].normal_(generator=muscle.random.generator)
    return loc + eps * scale
