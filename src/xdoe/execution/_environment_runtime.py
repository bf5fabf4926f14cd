"""The executor's side of one environment in one worker
(:class:`EnvironmentRuntime`): the value-form step the worker calls and the
state of the last step, for a class that writes either form of the step."""

from __future__ import annotations

from typing import Any, Callable

from xdoe._plugins import is_derived, items_of, values_of
from xdoe.environment import ActuatorInformation, Environment, EnvironmentState

__all__ = ["EnvironmentRuntime"]


class EnvironmentRuntime:
    """One environment of a worker from the start of an episode on: what the
    executor needs to step it as values (gymnasium's ``Env.step``), held
    here and not in the environment object.

    A class that writes :meth:`~xdoe.environment.Environment.update_values`
    is stepped through it and asked for its ``last_state``. A class that
    writes :meth:`~xdoe.environment.Environment.update` is stepped through
    ``update``: the action values become
    :class:`~xdoe.environment.ActuatorInformation` objects of the baseline's
    actuators, the returned state gives the values and is kept as the last
    state.

    Args:
        env (Environment): the environment, started for the episode.
        actuators (tuple[tuple[str, Any], ...]): ``(uid, space)`` of the
            actuators of its baseline, in order.
    """

    __slots__ = ("env", "actuators", "form", "update_values", "last_state", "state")

    def __init__(self, env: Environment, actuators: tuple[tuple[str, Any], ...]) -> None:
        self.env = env
        self.actuators = actuators
        #: the state of the last step through ``update`` (``None`` before the first)
        self.state: EnvironmentState | None = None
        self.update_values: Callable[[Any], tuple[Any, dict[str, float], bool, bool]]
        self.last_state: Callable[[], EnvironmentState]
        if is_derived(type(env), "update_values"):
            #: the name of the form the class wrote (for errors)
            self.form = "update"
            self.update_values = self._through_update
            self.last_state = self._kept_state
        else:
            self.form = "update_values"
            self.update_values = env.update_values
            self.last_state = env.last_state

    def restart(self) -> None:
        """The environment started a new episode with the same actuators:
        no state until its first update."""
        self.state = None

    def _through_update(self, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        """The step of an environment that writes ``update``, as values:
        ``(observation, rewards, terminated, truncated)``."""
        self.state = state = self.env.update(items_of(ActuatorInformation, self.actuators, actions))
        return values_of(state.sensors), {r.uid: r.value for r in state.rewards}, state.terminated, \
            state.truncated

    def _kept_state(self) -> EnvironmentState:
        """The state the last ``update`` returned; ``RuntimeError`` before the first."""
        if self.state is None:
            raise RuntimeError(f"{type(self.env).__name__}: no update() since the episode started")
        return self.state
