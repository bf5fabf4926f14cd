"""Any Stable-Baselines3 algorithm as an xdoe brain: SB3's own buffers,
losses and optimisers, fed with the transitions the muscles report."""

from __future__ import annotations

import io
import json
import pickle
import weakref
import zipfile
from collections import deque
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from xdoe.agent import Brain, Experience
from xdoe.components.agents._sb3_common import ALGORITHMS as _ALGORITHMS
from xdoe.components.agents._sb3_common import OwnRandomState, algorithm_class, require_sb3
from xdoe.components.agents._sb3_common import hyperparameters as _hyperparameters
from xdoe.components.agents._sb3_spaces import ActionCodec, ObservationCodec
from xdoe.environment import ActuatorInformation, SensorInformation

__all__ = ["SB3Brain"]

_FORMAT = "xdoe-sb3-brain/1"


class _SpacesEnv(gymnasium.Env):
    """Only the spaces: what an SB3 constructor needs; the executor steps the real environments."""

    def __init__(self, observation_space: gymnasium.Space, action_space: gymnasium.Space) -> None:
        self.observation_space = observation_space
        self.action_space = action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> Any:  # pragma: no cover - never stepped
        raise RuntimeError("the executor steps the environments, not SB3")


def _stack(items: list[Any]) -> Any:
    if isinstance(items[0], dict):
        return {k: np.stack([o[k] for o in items]) for k in items[0]}
    if len(items) == 1:  # one worker: np.stack's result, without its checks
        return np.asarray(items[0])[None]
    return np.stack(items)


def _column(values: list[float], shape: tuple[int, ...] = (-1, 1)) -> Any:
    """Floats as the float32 tensor SB3's ``RolloutBuffer.add`` takes
    (values ``(n, 1)``, log-probabilities ``(n,)``)."""
    import torch

    return torch.from_numpy(np.array(values, dtype=np.float32).reshape(shape))


def _distributions(policy: Any) -> list[Any]:
    """The SB3 action distributions the policy's modules hold (``action_dist``;
    made when the policy is built, never replaced), found once per policy."""
    from stable_baselines3.common.distributions import Distribution

    found = _DISTRIBUTIONS.get(policy)
    if found is None:
        found = _DISTRIBUTIONS[policy] = [d for module in policy.modules() for d in vars(module).values()
                                          if isinstance(d, Distribution)]
    return found


_DISTRIBUTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _drop_graph(policy: Any) -> None:
    """Cut what the last ``train()`` left tied to the autograd graph in the
    policy's action distributions (the last minibatch's torch distribution,
    gSDE's exploration matrix): distributions dropped (each forward pass makes
    its own), tensors detached (the same values), so the policy pickles to
    worker processes (``--parallel-workers``: torch refuses to send a tensor
    with a graph) and holds no minibatch graph while the muscles act."""
    import torch

    for dist in _distributions(policy):
        for name, value in list(vars(dist).items()):
            if isinstance(value, torch.distributions.Distribution) or (
                    isinstance(value, list) and any(isinstance(v, torch.distributions.Distribution)
                                                    for v in value)):
                setattr(dist, name, None)
            elif isinstance(value, torch.Tensor) and value.grad_fn is not None:
                setattr(dist, name, value.detach())


class SB3Brain(Brain):
    """A Stable-Baselines3 algorithm learning from the executor's transitions.

    Parameters:
        seed: the run's brain seed; seeds the network initialisation and every
            draw SB3 makes while learning (minibatches, replay samples), kept
            apart from the process's global generators: SB3's buffers draw
            from the brain's own numpy generator (:func:`~xdoe.components.agents._sb3_buffers.own`),
            torch code from the brain's torch generator swapped in around
            ``train()``.
        algorithm: ``PPO``, ``A2C``, ``DQN``, ``SAC``, ``TD3``, ``DDPG`` or a
            ``module:Class`` of any SB3-compatible algorithm (``sb3_contrib:QRDQN``).
        policy: SB3 policy name (default ``MlpPolicy``; with several sensors
            the observation is a ``Dict`` and ``MlpPolicy`` becomes
            ``MultiInputPolicy``).
        hyperparameters: the algorithm constructor's keyword arguments
            (``learning_rate``, ``n_steps``, ``batch_size``, ``buffer_size``,
            ``policy_kwargs``...); ``"lin_<x>"`` is a linear schedule from x
            to 0 (rl-zoo's notation); ``action_noise`` is the standard deviation
            of Gaussian exploration noise in the normalised action space. Or
            a mapping from algorithm names to such arguments
            (``{PPO: {...}, DQN: {...}}``): the entry of ``algorithm`` is
            used, so one agent definition serves a factor over algorithms.
        device: ``auto`` (default), ``cpu``, ``cuda`` or ``cuda:<n>``.
        store_replay_buffer: off-policy algorithms also save their replay
            buffer with every checkpoint (``save_replay_buffer``; large).
        total_timesteps: the horizon of SB3's schedules (learning rate, clip
            range, DQN's exploration), what ``learn(total_timesteps)`` would
            get (default 100000 transitions).
        torch_threads: torch's intra-op threads in this process
            (``torch.set_num_threads``, set at :meth:`setup`); 1 (default) is
            fastest for the small networks of most studies and does not
            oversubscribe cores shared with other runs (``--jobs``); ``null``
            leaves torch's default (one per core).

    Learning (train mode): the observation is the agent's sensors
    (:class:`~xdoe.components.agents._sb3_spaces.ObservationCodec`), the action its
    actuators (:class:`~xdoe.components.agents._sb3_spaces.ActionCodec`), the reward the
    agent's objective. On-policy algorithms fill SB3's ``RolloutBuffer`` with
    one column per worker (as SB3's vectorised environments would), bootstrap
    truncated episodes with ``gamma * V(s')`` as SB3 does, and call
    ``train()`` every ``n_steps`` x workers transitions. Off-policy algorithms
    add every transition to SB3's ``ReplayBuffer`` (truncation passed as
    ``TimeLimit.truncated``), call ``_on_step`` once per worker round and
    ``train(gradient_steps, batch_size)`` per ``train_freq`` after
    ``learning_starts``. After every ``train`` the muscles get the policy.

    Checkpoints: :meth:`store` writes a zip holding SB3's ``save`` archive,
    the replay buffer when ``store_replay_buffer`` (``save_replay_buffer``)
    and the brain's random state; :meth:`load` restores them (a partly
    filled rollout buffer is not kept: a resumed on-policy brain starts a new
    rollout).

    Raises:
        ValueError: unknown algorithm, hyperparameter (the accepted ones are
            listed) or device; sensors/actuators SB3 cannot take; a stored
            model whose spaces differ from the agent's; at :meth:`setup`, a
            buffer other than SB3's own ``RolloutBuffer``, ``DictRolloutBuffer``,
            ``ReplayBuffer``, ``DictReplayBuffer`` or ``NStepReplayBuffer`` (a
            ``rollout_buffer_class``/``replay_buffer_class`` hyperparameter,
            ``HerReplayBuffer``, an ``sb3_contrib`` algorithm's own buffer): its
            code may draw from numpy's global generator.
        ImportError: Stable-Baselines3 is not installed (``xdoe[sb3]``).
    """

    def __init__(self, seed: int = 0, algorithm: str = "PPO", policy: str = "MlpPolicy",
                 hyperparameters: dict[str, Any] | None = None, device: str = "auto",
                 store_replay_buffer: bool = False, total_timesteps: int = 100_000,
                 torch_threads: int | None = 1) -> None:
        super().__init__(seed=seed)
        if not isinstance(algorithm, str) or not isinstance(policy, str):
            raise ValueError("algorithm and policy must be names (strings)")
        if not (device in ("auto", "cpu", "cuda") or str(device).startswith("cuda:")):
            raise ValueError(f"device must be auto, cpu, cuda or cuda:<n>, got {device!r}")
        if isinstance(total_timesteps, bool) or not isinstance(total_timesteps, int) or total_timesteps < 1:
            raise ValueError(f"total_timesteps must be a positive integer, got {total_timesteps!r}")
        if torch_threads is not None and (isinstance(torch_threads, bool) or not isinstance(torch_threads, int)
                                          or torch_threads < 1):
            raise ValueError(f"torch_threads must be a positive integer or null, got {torch_threads!r}")
        if hyperparameters is not None and not isinstance(hyperparameters, dict):
            raise ValueError(f"hyperparameters must be a mapping, got {hyperparameters!r}")
        self.algorithm = algorithm
        self.cls = algorithm_class(algorithm)
        if hyperparameters and all(k in _ALGORITHMS or ":" in k for k in hyperparameters):
            if algorithm not in hyperparameters:
                raise ValueError(f"hyperparameters has entries for {', '.join(hyperparameters)}, "
                                 f"none for algorithm {algorithm!r}")
            hyperparameters = hyperparameters[algorithm]
        self.kwargs, self.action_noise = _hyperparameters(self.cls, hyperparameters)
        self.policy_name = policy
        self.device = device
        self.store_replay_buffer = bool(store_replay_buffer)
        self.total_timesteps = total_timesteps
        self.torch_threads = torch_threads
        self.random = OwnRandomState(seed)
        self.model: Any = None

    # -- set-up -----------------------------------------------------------------
    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        require_sb3()
        import torch
        from stable_baselines3.common.vec_env import DummyVecEnv

        if self.torch_threads is not None:
            torch.set_num_threads(self.torch_threads)

        self.observations = ObservationCodec(sensors)
        self.actions = ActionCodec(actuators)
        policy = self.policy_name
        if policy == "MlpPolicy" and isinstance(self.observations.space, gymnasium.spaces.Dict):
            policy = "MultiInputPolicy"
        env = DummyVecEnv([lambda: _SpacesEnv(self.observations.space, self.actions.space)])
        with self.random.active():
            try:
                self.model = self.cls(policy, env, device=self.device, verbose=0, **self.kwargs)
            except (TypeError, ValueError, AssertionError) as exc:
                raise ValueError(f"{self.algorithm} cannot be built for observation "
                                 f"{self.observations.space} and action {self.actions.space}: {exc}") from exc
        self._prepare()

    def _prepare(self) -> None:
        """Per-model state the executor's feeding needs (after set-up and load)."""
        from stable_baselines3.common.logger import Logger
        from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

        from xdoe.components.agents._sb3_buffers import own

        model = self.model
        model.set_logger(Logger(None, []))
        model._total_timesteps = self.total_timesteps
        self.on_policy = isinstance(model, OnPolicyAlgorithm)
        # the buffer SB3 built draws from the brain's generator (on-policy: refused here if
        # another class, replaced by _layout)
        own(model.rollout_buffer if self.on_policy else model.replay_buffer, self.random.numpy, self.algorithm)
        self.kind = "on" if self.on_policy else (
            "discrete" if isinstance(self.actions.space, gymnasium.spaces.Discrete) else "continuous")
        self._envs = 0  # workers the buffers are laid out for
        self._queues: list[deque] = []
        self._starts: list[bool] = []
        self._round = 0
        self._steps = self._episodes = self._collected = 0
        self._sent: tuple[Any, ...] | None = None
        model.policy.set_training_mode(False)

    def _layout(self) -> None:
        """Lay the buffers out for :attr:`workers` columns (SB3's ``n_envs``)."""
        model, n = self.model, max(int(self.workers), 1)
        self._envs = n
        self._queues = [deque() for _ in range(n)]
        self._starts = [True] * n
        model.n_envs = n
        if self.on_policy:
            from xdoe.components.agents._sb3_buffers import own

            model.rollout_buffer = own(model.rollout_buffer_class(
                model.n_steps, model.observation_space, model.action_space, device=model.device,
                gamma=model.gamma, gae_lambda=model.gae_lambda, n_envs=n, **model.rollout_buffer_kwargs),
                self.random.numpy, self.algorithm)

    # -- learning ------------------------------------------------------------------
    def thinking(self, experience: Experience) -> dict[str, Any] | None:
        self._ready()
        e, codec = experience, self.observations
        return self._learn(e.worker, codec.encode(e.sensors), lambda: self.actions.join(e.actuators), e.objective,
                           codec.encode(e.next_sensors), e.done, e.extras, e.truncated)

    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> dict[str, Any] | None:
        self._ready()
        codec = self.observations
        return self._learn(worker, codec.encode_values(observation), lambda: self.actions.join_values(action),
                           objective, codec.encode_values(next_observation), done, extras, truncated)

    def _learn(self, worker: int, obs: Any, action: Any, objective: float, next_obs: Any, done: bool,
               extras: dict[str, Any], truncated: bool) -> dict[str, Any] | None:
        """One transition (both forms): observations encoded, ``action()`` the joined action."""
        if self._envs != max(int(self.workers), 1):
            self._layout()
        learn = self._on_policy if self.on_policy else self._off_policy
        return self._update(learn(worker, obs, action, float(objective), next_obs, done, extras, truncated))

    def _ready(self) -> None:
        if self.model is None:
            raise RuntimeError("SB3Brain.setup() must be called before thinking()")

    def _values(self, observations: list[Any]) -> Any:
        import torch

        obs, _ = self.model.policy.obs_to_tensor(_stack(observations))
        with torch.no_grad():
            return self.model.policy.predict_values(obs)

    def _on_policy(self, worker: int, obs: Any, join: Any, reward: float, next_obs: Any, done: bool,
                   extras: dict[str, Any], truncated: bool) -> bool:
        import torch

        model = self.model
        action = np.asarray(extras["action"]) if "action" in extras else join()
        value, log_prob = extras.get("value"), extras.get("log_prob")
        if value is None or log_prob is None:  # e.g. replayed from the store: evaluate now
            obs_t, _ = model.policy.obs_to_tensor(_stack([obs]))
            with torch.no_grad():
                v, lp, _ = model.policy.evaluate_actions(obs_t, torch.as_tensor(action[None]).to(model.device))
            value, log_prob = float(v.reshape(-1)[0]), float(lp.reshape(-1)[0])
        if done and truncated:  # as SB3 does at a time limit (its issue #633)
            reward += model.gamma * float(self._values([next_obs]).reshape(-1)[0])
        w = worker % self._envs
        self._queues[w].append((obs, action, reward, self._starts[w], value, log_prob, next_obs, done))
        self._starts[w] = done
        trained = False
        while all(self._queues):
            rows = [q.popleft() for q in self._queues]
            buffer = model.rollout_buffer
            buffer.add(_stack([r[0] for r in rows]), _stack([r[1] for r in rows]),
                       np.array([r[2] for r in rows], dtype=np.float32),
                       np.array([r[3] for r in rows], dtype=np.float32),
                       _column([r[4] for r in rows]), _column([r[5] for r in rows], (-1,)))
            model.num_timesteps += self._envs
            if buffer.full:
                last_values = self._values([r[6] for r in rows])
                buffer.compute_returns_and_advantage(
                    last_values=last_values, dones=np.array([r[7] for r in rows], dtype=np.float32))
                model._update_current_progress_remaining(model.num_timesteps, self.total_timesteps)
                with self.random.active():
                    model.train()
                model.policy.set_training_mode(False)
                _drop_graph(model.policy)
                buffer.reset()
                trained = True
        return trained

    def _off_policy(self, worker: int, obs: Any, join: Any, reward: float, next_obs: Any, done: bool,
                    extras: dict[str, Any], truncated: bool) -> bool:
        from stable_baselines3.common.type_aliases import TrainFrequencyUnit

        model = self.model
        action = join()
        if isinstance(self.actions.space, gymnasium.spaces.Box):
            action = model.policy.scale_action(action.astype(np.float32))
        model.replay_buffer.add(
            _stack([obs]), _stack([next_obs]), np.asarray(action)[None], np.array([reward], dtype=np.float32),
            np.array([done]), [{"TimeLimit.truncated": bool(done and truncated)}])
        model.num_timesteps += 1
        self._collected += 1
        self._episodes += bool(done)
        self._round += 1
        if self._round < self._envs:
            return False
        self._round = 0
        self._steps += 1
        model._update_current_progress_remaining(model.num_timesteps, self.total_timesteps)
        model._on_step()
        freq = model.train_freq
        due = self._episodes if freq.unit == TrainFrequencyUnit.EPISODE else self._steps
        if due < freq.frequency:
            return False
        collected, self._steps, self._episodes, self._collected = self._collected, 0, 0, 0
        if model.num_timesteps <= model.learning_starts:
            return False
        gradient_steps = model.gradient_steps if model.gradient_steps >= 0 else collected
        if gradient_steps <= 0:
            return False
        with self.random.active():
            model.train(batch_size=model.batch_size, gradient_steps=gradient_steps)
        model.policy.set_training_mode(False)
        _drop_graph(model.policy)
        return True

    # -- muscles -----------------------------------------------------------------
    def _state(self) -> tuple[Any, ...]:
        model = self.model
        return (float(getattr(model, "exploration_rate", 0.0)),
                bool(not self.on_policy and model.num_timesteps < model.learning_starts))

    def _update(self, trained: bool) -> dict[str, Any] | None:
        state = self._state()
        if not trained and state == self._sent:
            return None
        self._sent = state
        update: dict[str, Any] = {"epsilon": state[0], "warmup": state[1]}
        if trained:
            update["policy"] = self.model.policy
        return update

    def muscle_state(self) -> dict[str, Any] | None:
        if self.model is None:
            return None
        self._sent = state = self._state()
        return {"policy": self.model.policy, "kind": self.kind, "epsilon": state[0], "warmup": state[1],
                "noise": self.action_noise}

    # -- checkpoints -------------------------------------------------------------------
    def store(self, path: Path) -> None:
        if self.model is None:
            raise RuntimeError("SB3Brain.setup() must be called before store()")
        model_bytes = io.BytesIO()
        self.model.save(model_bytes)
        meta = {"format": _FORMAT, "algorithm": self.algorithm, "sensors": self.observations.ids,
                "actuators": self.actions.ids}
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("meta.json", json.dumps(meta))
            zf.writestr("model.zip", model_bytes.getvalue())
            zf.writestr("random.pkl", pickle.dumps(self.random, protocol=pickle.HIGHEST_PROTOCOL))
            if self.store_replay_buffer and not self.on_policy:
                buffer = io.BytesIO()
                self.model.save_replay_buffer(buffer)
                zf.writestr("replay_buffer.pkl", buffer.getvalue())

    def load(self, path: Path) -> None:
        if self.model is None:
            raise RuntimeError("SB3Brain.setup() must be called before load()")
        try:
            with zipfile.ZipFile(path) as zf:
                meta = json.loads(zf.read("meta.json"))
                if meta.get("format") != _FORMAT:
                    raise ValueError(f"format {meta.get('format')!r}")
                model_bytes = zf.read("model.zip")
                random = pickle.loads(zf.read("random.pkl"))
                replay = zf.read("replay_buffer.pkl") if "replay_buffer.pkl" in zf.namelist() else None
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{path}: not an SB3Brain file ({exc})") from exc
        if (meta["sensors"], meta["actuators"]) != (self.observations.ids, self.actions.ids):
            raise ValueError(f"{path}: stored for sensors {meta['sensors']} and actuators "
                             f"{meta['actuators']}, not {self.observations.ids} / {self.actions.ids}")
        with self.random.active():
            model = self.cls.load(io.BytesIO(model_bytes), device=self.device)
        if (model.observation_space, model.action_space) != (self.observations.space, self.actions.space):
            raise ValueError(f"{path}: stored spaces {model.observation_space} / {model.action_space} "
                             f"differ from {self.observations.space} / {self.actions.space}")
        if replay is not None:
            model.load_replay_buffer(io.BytesIO(replay))
        self.model = model
        self.random = random
        self._prepare()
