"""Tabular Q-learning (Watkins & Dayan 1992) on discrete sensors and actuators.

Reference: C. J. C. H. Watkins and P. Dayan, "Q-learning", Machine Learning 8,
279-292 (1992); Sutton & Barto, *Reinforcement Learning: An Introduction*,
2nd ed., section 6.5.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from xdoe.agent import Brain, Mode, Muscle
from xdoe.components.agents._qtable import DiscreteEncoder, QTable
from xdoe.environment import ActuatorInformation, SensorInformation, action_mask, is_action_mask

__all__ = ["DiscreteEncoder", "QTable", "QLearningBrain", "QLearningMuscle"]


#: ``Mode.TRAIN`` (a module constant: an enum member looked up on its class costs more)
_TRAIN = Mode.TRAIN


def _check_number(name: str, value: Any, low: float, high: float, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not (low < value if low_open else low <= value) or not value <= high:
        raise ValueError(f"{name} must be in {'(' if low_open else '['}{low}, {high}], got {value}")
    return value


class QLearningBrain(Brain):
    """Tabular Q-learning (Watkins & Dayan 1992).

    Parameters:
        seed: seeds :attr:`rng` (the update itself is deterministic).
        alpha: learning rate in (0, 1].
        gamma: discount factor in [0, 1].
        initial_q: value of unvisited table entries (a high value makes the
            greedy policy explore optimistically).

    The state is the joint value of the agent's sensors, all of which must be
    ``Discrete``, ``MultiDiscrete`` or ``MultiBinary`` (numbered by
    :class:`DiscreteEncoder`); the action is the joint value of its actuators
    (same spaces; several actuators form one joint action). For every step
    :meth:`thinking` applies

    ``Q[s, a] += alpha * (r + gamma * max_a' Q[s', a'] * (1 - terminated) - Q[s, a])``

    with ``r = experience.objective``. A truncated episode (a time limit, a
    termination condition) bootstraps from ``s'``, a terminated one does not
    (Sutton & Barto 2018, sec. 6.5; Pardo et al. 2018, "Time Limits in
    Reinforcement Learning").
    The table (:class:`QTable`, dense up to 2**22 entries, else sparse) is the
    muscles' update: :meth:`thinking` returns it at the end of each episode
    (``experience.done``; muscles in the same process share it anyway) and
    :meth:`muscle_state` returns it. :meth:`store` writes it as ``.npz`` data
    (no pickle) with the sensor and actuator ids; :meth:`load` restores it
    exactly.

    Raises:
        ValueError: a parameter out of range; in :meth:`setup`, a sensor or
            actuator whose space is not discrete (named with its space); in
            :meth:`load`, a file whose ids or shape do not match the agent's.
    """

    def __init__(self, seed: int = 0, alpha: float = 0.1, gamma: float = 0.99, initial_q: float = 0.0) -> None:
        super().__init__(seed=seed)
        self.alpha = _check_number("alpha", alpha, 0.0, 1.0, low_open=True)
        self.gamma = _check_number("gamma", gamma, 0.0, 1.0)
        self.initial_q = _check_number("initial_q", initial_q, -math.inf, math.inf)
        self.states: DiscreteEncoder | None = None
        self.actions: DiscreteEncoder | None = None
        self.table: QTable | None = None

    #: set by setup (a class default: brains pickled before it existed unpickle without it)
    _direct: tuple[int, int, int, int] = (0, 0, 0, 0)

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        self.states = DiscreteEncoder([s for s in sensors if not is_action_mask(s.uid)], "sensor")
        self.actions = DiscreteEncoder(actuators, "actuator")
        self.table = QTable(self.states.size, self.actions.size, self.initial_q)
        self._direct = _direct(self.states, self.actions)

    def thinking_values(self, worker: int, episode: int, step: int, observation: Any, action: Any,
                        rewards: dict[str, float], objective: float, next_observation: Any, done: bool,
                        extras: dict[str, Any], truncated: bool) -> QTable | None:
        """The one Q-learning update (Sutton & Barto 2018, eq. 6.8) of the
        step's state and action (the value form the executor calls;
        :meth:`thinking` is derived from it) towards ``objective`` plus the
        discounted best value of the next state unless the episode
        terminated (a truncated episode bootstraps). Returns the table at
        the episode's end (``done``), else ``None``.

        One ``Discrete`` sensor and actuator (Taxi) is encoded here directly
        (an index is the value minus the space's start); anything else by
        :meth:`DiscreteEncoder.encode_values`, whose ``ValueError`` names a
        value outside its space."""
        # set with the table by setup: its shape is the spaces' (load checks it); empty: the general path.
        # ``a <= x and x < b`` rather than ``a <= x < b``: the same test, three bytecodes fewer in CPython 3.11
        start, stop, action_start, action_stop = self._direct
        if type(observation) is int and type(next_observation) is int and type(action) is int \
                and start <= observation and observation < stop and start <= next_observation \
                and next_observation < stop and action_start <= action and action < action_stop:
            s, a, s2 = observation - start, action - action_start, next_observation - start
        else:
            states, actions = self.states, self.actions
            if self.table is None or states is None or actions is None:
                raise RuntimeError("QLearningBrain.setup() must be called before thinking()")
            s, a = states.encode_values(observation), actions.encode_values(action)
            s2 = states.encode_values(next_observation) if not done or truncated else -1
        table: QTable = self.table  # type: ignore[assignment]  # set by setup (checked above)
        views = table.views  # dense: its rows as kept views (QTable.values, without a call or a new view per step)
        target = float(objective)
        if not done or truncated:
            # max over a Python list: the same value as ndarray.max() (for
            # tables without NaN), several times faster on a short row
            target += self.gamma * max((table.values(s2) if views is None else views[s2]).tolist())
        if views is not None:  # dense: Python floats (the same IEEE arithmetic, faster than numpy scalars)
            row = views[s]
            old = row.item(a)
            row[a] = old + self.alpha * (target - old)
        else:
            row = table.row(s)
            row[a] += self.alpha * (target - row[a])
        return table if done else None

    def muscle_state(self) -> QTable | None:
        return self.table

    def store(self, path: Path) -> None:
        if self.table is None or self.states is None or self.actions is None:
            raise RuntimeError("QLearningBrain.setup() must be called before store()")
        arrays = self.table.to_arrays()
        arrays["sensor_ids"] = np.array(self.states.ids, dtype=str)
        arrays["actuator_ids"] = np.array(self.actions.ids, dtype=str)
        with open(path, "wb") as fh:  # a file object: numpy adds no ".npz" suffix
            np.savez(fh, **arrays)

    def load(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a QLearningBrain file ({exc})") from exc
        table = QTable.from_arrays(arrays)
        if self.states is not None and self.actions is not None:
            ids = (list(arrays["sensor_ids"]), list(arrays["actuator_ids"]))
            if ids != (self.states.ids, self.actions.ids) or (table.n_states, table.n_actions) != (
                self.states.size,
                self.actions.size,
            ):
                raise ValueError(
                    f"{path}: table for sensors {ids[0]} / actuators {ids[1]} "
                    f"({table.n_states}x{table.n_actions}) does not fit this agent's "
                    f"sensors {self.states.ids} / actuators {self.actions.ids} "
                    f"({self.states.size}x{self.actions.size})"
                )
        self.table = table


class QLearningMuscle(Muscle):
    """Epsilon-greedy actions from a :class:`QLearningBrain`'s table.

    Parameters:
        uid: the agent name.
        seed: seeds :attr:`rng` (exploration and tie-breaking).
        epsilon: probability of a uniformly random action in train mode, in [0, 1].
            With an action-mask sensor ``<prefix>.action_mask`` for a single
            ``Discrete`` actuator ``<prefix>.action`` (PettingZoo), random and
            greedy actions are chosen among the allowed ones; mask sensors are
            not part of the state.
        epsilon_decay: factor in (0, 1] applied to epsilon at the start of
            every train-mode episode after the first; ``None``: constant.
        epsilon_min: epsilon never decays below this, in [0, 1].

    In ``Mode.TEST`` actions are greedy. Ties between equal action values are
    broken uniformly with :attr:`rng`. Until it receives the brain's table
    (:meth:`update`, the executor sends ``muscle_state()`` at every phase
    start) it acts as with an untrained table: uniformly at random.

    Raises:
        ValueError: a parameter out of range; in :meth:`setup`, a
            non-discrete sensor or actuator; in :meth:`update`, a table whose
            shape does not fit the agent's spaces.
    """

    #: set by setup (a class default: muscles pickled before it existed unpickle without it)
    _direct: tuple[int, int, int, int] = (0, 0, 0, 0)

    def __init__(
        self,
        uid: str,
        seed: int = 0,
        epsilon: float = 0.1,
        epsilon_decay: float | None = None,
        epsilon_min: float = 0.0,
    ) -> None:
        super().__init__(uid=uid, seed=seed)
        self.epsilon = _check_number("epsilon", epsilon, 0.0, 1.0)
        self.epsilon_decay = (
            None if epsilon_decay is None else _check_number("epsilon_decay", epsilon_decay, 0.0, 1.0, low_open=True)
        )
        self.epsilon_min = _check_number("epsilon_min", epsilon_min, 0.0, 1.0)
        self.current_epsilon = self.epsilon
        self._masked = False
        self.train_episodes = 0
        self.states: DiscreteEncoder | None = None
        self.actions: DiscreteEncoder | None = None
        self.table: QTable | None = None

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        self._masked = any(is_action_mask(s.uid) for s in sensors)
        self.states = DiscreteEncoder([s for s in sensors if not is_action_mask(s.uid)], "sensor")
        self.actions = DiscreteEncoder(actuators, "actuator")
        self._direct = (0, 0, 0, 0) if self._masked else _direct(self.states, self.actions)
        if self.table is None:
            self.table = QTable(self.states.size, self.actions.size)
        else:
            self._check(self.table)

    def _check(self, table: QTable) -> None:
        if self.states is not None and self.actions is not None and (
            (table.n_states, table.n_actions) != (self.states.size, self.actions.size)
        ):
            raise ValueError(
                f"muscle {self.uid}: Q table {table.n_states}x{table.n_actions} does not fit "
                f"{self.states.size} states x {self.actions.size} actions"
            )

    def reset(self) -> None:
        """Count train-mode episodes and decay epsilon."""
        if self.mode == _TRAIN:
            if self.train_episodes and self.epsilon_decay is not None:
                self.current_epsilon = max(self.epsilon_min, self.current_epsilon * self.epsilon_decay)
            self.train_episodes += 1

    def update(self, update: Any) -> None:
        """Take the brain's :class:`QTable` (``None`` is ignored)."""
        if update is None:
            return
        if not isinstance(update, QTable):
            raise TypeError(f"QLearningMuscle expects a QTable, got {type(update).__name__}")
        self._check(update)
        self.table = update

    def propose_values(self, observation: Any) -> Any:
        """The one epsilon-greedy choice (Sutton & Barto 2018, sec. 2.2) of the
        action for ``observation`` (the value form the executor calls;
        :meth:`propose_actions` is derived from it): in train mode with
        probability :attr:`current_epsilon` uniformly at random, else the best
        by the table, ties broken uniformly; among the allowed actions when
        the agent has an action mask. Draws from :attr:`rng`: one ``random()``
        in train mode, then one ``integers`` for a random action or a tie.

        The greedy action is that of ``best = np.flatnonzero(values ==
        values.max())``: ``best[0]`` if it is unique, else ``rng.choice(best)``
        (which draws ``rng.integers(len(best))`` and indexes ``best`` with it,
        done here directly), computed on the row as a Python list, several
        times faster for the short rows of a Q table
        (``tests/components/agents/test_qlearning.py`` checks the equivalence).
        One ``Discrete`` sensor and actuator (Taxi) is encoded and decoded here
        directly; anything else by :class:`DiscreteEncoder`, whose
        ``ValueError`` names a value outside its space.

        Raises:
            RuntimeError: before :meth:`setup`.
        """
        start, stop, action_start, action_stop = self._direct  # empty: the general path
        table, rng = self.table, self.rng
        mask = None
        if type(observation) is int and start <= observation and observation < stop:  # (see thinking_values)
            state = observation - start
        else:
            if self.states is None or table is None:
                raise RuntimeError("QLearningMuscle.setup() must be called before propose_values()")
            state = self.states.encode_values(observation)
            if self._masked and len(self.actuators) == 1 and type(observation) is dict:
                mask = action_mask(self.actuators[0], [SensorInformation(uid, None, value)
                                                       for uid, value in observation.items()])
        if self.mode == _TRAIN and rng.random() < self.current_epsilon:
            if mask is None:
                index = int(rng.integers(table.n_actions))
            else:  # legal moves only (PettingZoo's action_mask)
                index = int(np.flatnonzero(mask)[int(rng.integers(int(mask.sum())))])
        else:
            views = table.views  # dense: its rows as kept views (QTable.values, without a call or a new view)
            if mask is None:
                row = (table.values(state) if views is None else views[state]).tolist()
            else:  # illegal moves are never the best
                row = np.where(mask, table.values(state), -np.inf).tolist()
            best_value = max(row)
            index = row.index(best_value)
            ties = row.count(best_value)
            if ties != 1:
                index = _tied(row, best_value, index, ties, rng)
        if action_start < action_stop:  # one Discrete actuator: its value is the index plus its start
            return index + action_start
        encoder = self.actions
        assert encoder is not None
        decoded = encoder.decode(index)
        return decoded[0] if len(self.actuators) == 1 else dict(zip(encoder.ids, decoded))


def _tied(row: list[float], best_value: float, index: int, ties: int, rng: np.random.Generator) -> int:
    """``rng.choice(best)`` for the ``ties`` indices ``best`` of ``best_value``
    in ``row`` (``index``: the first): one ``rng.integers(ties)`` draw ``j``,
    then the ``j``-th of them, found with ``list.index`` (a function apart:
    a comprehension in :meth:`QLearningMuscle.propose_values` would make
    ``best_value`` a cell variable there, a cell made at every step)."""
    for _ in range(int(rng.integers(ties))):
        index = row.index(best_value, index + 1)
    return index


def _direct(states: DiscreteEncoder, actions: DiscreteEncoder) -> tuple[int, int, int, int]:
    """``(start, stop, action start, action stop)``: the values of the agent's
    one ``Discrete`` sensor (``start <= v < stop``) and of its one
    ``Discrete`` actuator, the inlined encoding of
    :meth:`QLearningBrain.thinking_values` and
    :meth:`QLearningMuscle.propose_values` (a Python int ``v`` in its range
    has the index ``v - start``: two specialised int comparisons, where
    ``v in range(...)`` costs several generic ones in C); else ``(0, 0, 0,
    0)``, empty ranges: every value takes the general path."""
    if not (states._single and actions._single):
        return 0, 0, 0, 0
    start, action_start = states._single_start, actions._single_start
    return start, start + states.size, action_start, action_start + actions.size
