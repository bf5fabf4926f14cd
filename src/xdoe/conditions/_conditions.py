"""The built-in termination conditions."""

from __future__ import annotations

import re
from collections import deque
from xdoe.conditions._base import (
    EpisodeProgress,
    PhaseProgress,
    StepProgress,
    TerminationCondition,
    Verdict,
)

__all__ = [
    "EnvironmentTerminationCondition",
    "MaxEpisodesTerminationCondition",
    "MaxStepsTerminationCondition",
    "AgentObjectiveTerminationCondition",
]


class EnvironmentTerminationCondition(TerminationCondition):
    """The episode ends when an environment of the worker reports ``done``.

    Answers ``RESET`` after an update whose state is done, else ``CONTINUE``.
    This is the default episode condition when a phase's simulation lists no
    conditions.
    """

    def step_finished(self, step: StepProgress) -> Verdict:
        return Verdict.RESET if step.done else Verdict.CONTINUE


class MaxEpisodesTerminationCondition(TerminationCondition):
    """The phase ends when every worker has run ``phase_config.episodes``
    episodes (answers ``STOP_PHASE`` after the last of them).

    The executor never starts more than ``episodes`` episodes in a worker
    anyway (a worker that has used its budget waits for the others), so this
    condition, usual as ``run_config.condition`` in palaestrAI documents,
    states the default explicitly.
    """

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        phase = episode.phase
        if len(phase.episodes_done) == phase.workers and all(
            done >= phase.episodes for done in phase.episodes_done
        ):
            return Verdict.STOP_PHASE
        return Verdict.CONTINUE


class MaxStepsTerminationCondition(TerminationCondition):
    """Limits the number of steps (environment updates).

    Parameters:
        episode_steps: an episode ends (``RESET``) after this many updates.
        phase_steps: the phase ends (``STOP_PHASE``) after this many updates,
            counted over all workers together.

    Raises:
        ValueError: neither is given, or one is not a positive integer.
    """

    def __init__(self, episode_steps: int | None = None, phase_steps: int | None = None) -> None:
        super().__init__()
        if episode_steps is None and phase_steps is None:
            raise ValueError("give episode_steps and/or phase_steps")
        for name, value in (("episode_steps", episode_steps), ("phase_steps", phase_steps)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.episode_steps = episode_steps
        self.phase_steps = phase_steps

    def step_finished(self, step: StepProgress) -> Verdict:
        if self.phase_steps is not None and step.phase.steps >= self.phase_steps:
            return Verdict.STOP_PHASE
        if self.episode_steps is not None and step.step >= self.episode_steps:
            return Verdict.RESET
        return Verdict.CONTINUE

    def __repr__(self) -> str:
        return (
            f"MaxStepsTerminationCondition(episode_steps={self.episode_steps}, "
            f"phase_steps={self.phase_steps})"
        )


_THRESHOLD = re.compile(r"^(brain|phase)_avg([1-9][0-9]*)$")


class AgentObjectiveTerminationCondition(TerminationCondition):
    """Ends episodes or the phase when an agent's objective is good enough
    (palaestrAI's thresholds).

    Parameters: one keyword per agent name, mapping threshold keys to values,
    e.g. ``{learner: {brain_avg100: 8.5, phase_avg10: 9.0}}``:

    - ``brain_avgN``: the worker's episode ends (``RESET``) when the mean
      objective of the agent over its last ``N`` steps (all workers, as its
      brain saw them) is at least the value;
    - ``phase_avgN``: the phase ends (``STOP_PHASE``) when the mean over the
      agent's last ``N`` episodes (all workers) of the episode objective (the
      sum of the objective over the episode) is at least the value.

    A window must be full (``N`` values) before it can fire, and it is
    emptied when it fires, so the next answer needs ``N`` fresh values.
    Windows start empty at every phase. Agents not in a phase are ignored.

    Raises:
        ValueError: a key is not ``brain_avgN``/``phase_avgN`` or a value is
            not a number.
    """

    def __init__(self, **thresholds: dict[str, float]) -> None:
        super().__init__()
        self.brain: dict[str, list[tuple[int, float]]] = {}
        self.phase: dict[str, list[tuple[int, float]]] = {}
        for agent, spec in thresholds.items():
            if not isinstance(spec, dict) or not spec:
                raise ValueError(
                    f"{agent}: expected a mapping like {{brain_avg100: 8.5, phase_avg10: 9.0}}, got {spec!r}"
                )
            for key, value in spec.items():
                match = _THRESHOLD.match(str(key))
                if match is None:
                    raise ValueError(f"{agent}.{key}: expected brain_avgN or phase_avgN (N >= 1)")
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ValueError(f"{agent}.{key}: expected a number, got {value!r}")
                target = self.brain if match.group(1) == "brain" else self.phase
                target.setdefault(agent, []).append((int(match.group(2)), float(value)))
        self._thresholds = thresholds
        self._steps: dict[tuple[str, int], deque[float]] = {}
        self._episodes: dict[tuple[str, int], deque[float]] = {}

    def phase_started(self, phase: PhaseProgress) -> None:
        self._steps = {(a, n): deque(maxlen=n) for a, ts in self.brain.items() for n, _ in ts}
        self._episodes = {(a, n): deque(maxlen=n) for a, ts in self.phase.items() for n, _ in ts}

    @staticmethod
    def _check(windows: dict[tuple[str, int], deque[float]], agent: str,
               thresholds: list[tuple[int, float]], value: float) -> bool:
        fired = False
        for n, limit in thresholds:
            window = windows.get((agent, n))
            if window is None:
                window = windows[(agent, n)] = deque(maxlen=n)
            window.append(value)
            if len(window) == n and sum(window) / n >= limit:
                window.clear()
                fired = True
        return fired

    def step_finished(self, step: StepProgress) -> Verdict:
        verdict = Verdict.CONTINUE
        objectives = step.objectives
        for agent, thresholds in self.brain.items():
            value = objectives.get(agent)
            if value is not None and self._check(self._steps, agent, thresholds, value):
                verdict = Verdict.RESET
        return verdict

    def episode_finished(self, episode: EpisodeProgress) -> Verdict:
        verdict = Verdict.CONTINUE
        for agent, thresholds in self.phase.items():
            value = episode.objectives.get(agent)
            if value is not None and self._check(self._episodes, agent, thresholds, value):
                verdict = Verdict.STOP_PHASE
        return verdict

    def __repr__(self) -> str:
        return f"AgentObjectiveTerminationCondition(**{self._thresholds!r})"
