"""The episode bookkeeping of a :class:`~xdoe.execution._worker.Worker`
(a mixin): start an episode (reset the environments and muscles), end one
(complete pending transitions, record the episode per agent)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from xdoe._cuts import CUT_CONDITION, CUT_ENVIRONMENT, CUT_STOP
from xdoe.conditions import EpisodeProgress
from xdoe.errors import RunError
from xdoe.execution._agent_runtime import COMPLETE, AgentRuntime
from xdoe.simulation import SimulationController

__all__ = ["WorkerEpisodes", "component_error"]


def component_error(where: str, exc: BaseException) -> RunError:
    err = RunError(f"{where} raised {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


class WorkerEpisodes:
    """Start and end of a worker's episodes (see the module docstring); the
    state is :class:`~xdoe.execution._worker.Worker`'s (its slots)."""

    __slots__ = ()

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...

    def start_episode(self, controller: SimulationController, *, started: bool = False) -> None:
        """Reset the environments (unless ``started``: the phase set-up already
        did) and the muscles, and tell the controller."""
        if not started:
            for i, env in enumerate(self.envs):
                try:
                    baseline = env.start_environment()
                except Exception as exc:
                    raise component_error(f"environment {self.env_uids[i]!r}: start_environment", exc) from exc
                self.set_baseline(i, baseline)
        if self.need_map:
            self._rebuild_map()
        for agent in self.agents:
            try:
                agent.muscle.reset()
            except Exception as exc:
                raise component_error(f"agent {agent.name!r}: muscle.reset", exc) from exc
            agent.transition = None
            agent.left = None
            agent.ep_reward = 0.0
            agent.ep_objective = 0.0
        self.left_any = False
        self.step = 0
        if self.observation_check is not None:
            self.check_at = 1
        self.done = False
        self.env_actions[:] = [None] * len(self.env_actions)
        self.progress.episode = self.episode
        self.progress.step = 0
        self.progress.done = False
        self.in_episode = True
        self.started_at = time.perf_counter()
        controller.start_episode(self)

    def end_episode(self, truncated: bool, cut_by: str | None = None) -> EpisodeProgress:
        """Complete pending transitions (``done=True``; terminated when one of
        the agent's environments reported ``terminated``, else truncated: by
        the environment's time limit, a termination condition or the phase's
        end), record the episode per agent and return it for the conditions.

        ``truncated``: the phase ended while the episode ran (``extras.truncated``);
        ``cut_by``: what cut the episode (:func:`cut_cause`, :mod:`xdoe._cuts`),
        ``None`` when the environment ended it. Each agent's episode row and
        last step row say how it ended: an agent that left the episode early
        (PettingZoo) as it left; else terminated when its environments
        reported ``terminated`` and nothing cut the episode, truncated with
        its cause (``cut_by``, or ``environment``) otherwise."""
        if truncated and cut_by is None:
            cut_by = CUT_STOP
        agents = self.agents
        ends: list[tuple[bool, bool, str | None]] = []
        for index, agent in enumerate(agents):
            if agent.left is not None:  # left before the end: as it left
                ends.append((not agent.left, agent.left, CUT_ENVIRONMENT if agent.left else None))
            elif cut_by is None and self._terminated(agent):
                ends.append((True, False, None))
            else:
                ends.append((False, True, cut_by or (CUT_ENVIRONMENT if self.done else CUT_CONDITION)))
            if agent.transition is not None:
                terminated, cut, cause = ends[-1]
                self.act(index, COMPLETE, (True, cut, cause))
        wall = time.perf_counter() - self.started_at
        rewards: dict[str, float] = {}
        objectives: dict[str, float] = {}
        for agent in agents:
            rewards[agent.name] = agent.ep_reward
            objectives[agent.name] = agent.ep_objective
        recorder = self.recorder
        if recorder is not None:
            extras: dict[str, Any] = {"truncated": True} if truncated else {}
            infos = {}
            for i, uid in enumerate(self.env_uids):
                state = self.states[i]
                if not self.fetch[i] and self.step > 0:  # the state of its last update, read once
                    state = self._last_state(i)
                if state is not None and state.info:
                    infos[uid] = state.info
            if infos:
                extras["info"] = infos
            if self.episode_extras:
                extras.update(self.episode_extras)
            for agent, (terminated, cut, cause) in zip(agents, ends):
                recorder.episode_finished(
                    self.index, self.episode, agent.name, self.step, agent.ep_reward,
                    agent.ep_objective, wall, extras or None, terminated, cut, cause,
                )
            recorder.flush()  # durable before the next episode starts: a crash loses at most that one
        episode = EpisodeProgress(
            self.phase_progress, self.index, self.episode, self.step, rewards, objectives)
        self.phase_progress.episodes_done[self.index] += 1
        self.episode += 1
        self.in_episode = False
        return episode

    def _terminated(self, agent: AgentRuntime) -> bool:
        """Whether one of the agent's environments reported ``terminated``."""
        terminated = self.env_terminated
        for i in agent.reward_envs:  # a loop, not any() of a generator: once per episode and agent
            if terminated[i]:
                return True
        return False
