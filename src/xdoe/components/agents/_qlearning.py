"""Tabular Q-learning (Watkins & Dayan 1992) on discrete sensors and actuators.

Reference: C. J. C. H. Watkins and P. Dayan, "Q-learning", Machine Learning 8,
279-292 (1992); Sutton & Barto, *Reinforcement Learning: An Introduction*,
2nd ed., section 6.5.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

from xdoe.agent import Brain, Experience, Mode, Muscle
from xdoe.environment import ActuatorInformation, SensorInformation, action_mask, is_action_mask

__all__ = ["DiscreteEncoder", "QTable", "QLearningBrain", "QLearningMuscle"]

#: Tables with at most this many entries (states x actions) are dense numpy
#: arrays (32 MiB of float64); larger ones keep a row only for visited states.
DENSE_LIMIT = 2**22


class DiscreteEncoder:
    """Numbers the joint values of several discrete spaces ``0 .. size-1``
    (mixed radix, first id most significant).

    Supported spaces: ``Discrete(n, start)`` (n digits), ``MultiDiscrete(nvec,
    start)`` (one digit per element, any shape, row-major), ``MultiBinary(n)``.

    Args:
        items: sensors or actuators (``uid`` and ``space`` are used).
        kind: ``"sensor"`` or ``"actuator"``, for messages.

    Raises:
        ValueError: an item's space is not one of the above (the message names
            the id and the space), there is no item, or the joint space has
            2**63 elements or more.
    """

    def __init__(self, items: Sequence[SensorInformation | ActuatorInformation], kind: str) -> None:
        if not items:
            raise ValueError(f"Q-learning needs at least one discrete {kind}")
        self.kind = kind
        self.ids: list[str] = []
        self.spaces: list[spaces.Space] = []
        self._radices: list[np.ndarray] = []  # per item, radices of its digits
        self._starts: list[np.ndarray] = []
        for item in items:
            space = item.space
            if isinstance(space, spaces.Discrete):
                radix, start = np.array([space.n]), np.array([space.start])
            elif isinstance(space, spaces.MultiDiscrete):
                radix, start = space.nvec.ravel(), space.start.ravel()
            elif isinstance(space, spaces.MultiBinary):
                radix = np.full(int(np.prod(space.shape)), 2)
                start = np.zeros_like(radix)
            else:
                raise ValueError(
                    f"Q-learning needs discrete spaces (Discrete, MultiDiscrete, "
                    f"MultiBinary), but {kind} {item.uid} has {space}"
                )
            self.ids.append(item.uid)
            self.spaces.append(space)
            self._radices.append(radix.astype(np.int64))
            self._starts.append(start.astype(np.int64))
        radices = [int(r) for radix in self._radices for r in radix]
        self.size = math.prod(radices)
        if self.size >= 2**63:
            raise ValueError(f"the joint {kind} space of {self.ids} is too large ({self.size} values)")
        # multipliers: digit i weighs prod(radices[i+1:])
        mult, weights = 1, []
        for r in reversed(radices):
            weights.append(mult)
            mult *= r
        self._weights = np.array(weights[::-1], dtype=np.int64)
        # One Discrete item (the common case, e.g. Taxi) is encoded and decoded
        # with Python ints only: numpy calls cost microseconds on every step.
        self._single = len(self.ids) == 1 and isinstance(self.spaces[0], spaces.Discrete)
        self._single_id = self.ids[0]
        self._single_start = int(self._starts[0][0])

    def encode(self, items: Sequence[SensorInformation | ActuatorInformation]) -> int:
        """The index of the items' joint value (items matched by id; extra
        items are ignored). Raises ``ValueError`` for a missing id or a value
        outside its space."""
        if self._single and len(items) == 1:
            item = items[0]
            value = item.value
            if item.uid == self._single_id and (type(value) is int or isinstance(value, np.integer)):
                digit = (value if type(value) is int else int(value)) - self._single_start
                if 0 <= digit < self.size:
                    return digit
                raise ValueError(f"{self.kind} {self.ids[0]}: {value!r} not in {self.spaces[0]}")
        by_id = {item.uid: item.value for item in items}
        digits = []
        for uid, space, radix, start in zip(self.ids, self.spaces, self._radices, self._starts):
            if uid not in by_id or by_id[uid] is None:
                raise ValueError(f"no value for {self.kind} {uid}")
            value = np.asarray(by_id[uid])
            if value.dtype.kind not in "iub":
                raise ValueError(f"{self.kind} {uid}: {by_id[uid]!r} is not an integer value of {space}")
            d = value.astype(np.int64).ravel() - start
            if d.shape != radix.shape or (d < 0).any() or (d >= radix).any():
                raise ValueError(f"{self.kind} {uid}: {by_id[uid]!r} not in {space}")
            digits.append(d)
        return int(np.dot(np.concatenate(digits), self._weights))

    def decode(self, index: int) -> list[Any]:
        """The value of each item (in id order) for ``index``: Python ints for
        ``Discrete``, numpy arrays of the space's shape and dtype otherwise."""
        if self._single:  # the same arithmetic as below, in Python ints
            return [int(index) % self.size + self._single_start]
        digits = (int(index) // self._weights) % np.concatenate(self._radices)
        out, pos = [], 0
        for space, radix, start in zip(self.spaces, self._radices, self._starts):
            d = digits[pos : pos + radix.size] + start
            pos += radix.size
            if isinstance(space, spaces.Discrete):
                out.append(int(d[0]))
            else:
                out.append(d.reshape(space.shape).astype(space.dtype))
        return out


class QTable:
    """Action values ``Q[state, action]``, dense (a numpy array) when
    ``n_states * n_actions <= DENSE_LIMIT``, otherwise sparse (a dict of rows
    for visited states; unvisited states read as ``initial``).

    Args:
        n_states, n_actions: the table's shape.
        initial: the value of unvisited entries.
    """

    def __init__(self, n_states: int, n_actions: int, initial: float = 0.0) -> None:
        self.n_states, self.n_actions = int(n_states), int(n_actions)
        self.initial = float(initial)
        self.dense = self.n_states * self.n_actions <= DENSE_LIMIT
        self._default = np.full(self.n_actions, self.initial)
        self._default.flags.writeable = False
        if self.dense:
            self.q: np.ndarray | None = np.full((self.n_states, self.n_actions), self.initial)
            self.rows: dict[int, np.ndarray] = {}
        else:
            self.q = None
            self.rows = {}

    def values(self, state: int) -> np.ndarray:
        """The action values of ``state`` (read only: do not modify)."""
        if self.q is not None:
            return self.q[state]
        return self.rows.get(state, self._default)

    def row(self, state: int) -> np.ndarray:
        """The writable action values of ``state``."""
        if self.q is not None:
            return self.q[state]
        row = self.rows.get(state)
        if row is None:
            row = self.rows[state] = np.full(self.n_actions, self.initial)
        return row

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The table as arrays (for ``numpy.savez``)."""
        head = {"shape": np.array([self.n_states, self.n_actions], dtype=np.int64),
                "initial": np.array(self.initial)}
        if self.q is not None:
            return {**head, "q": self.q}
        states = np.array(sorted(self.rows), dtype=np.int64)
        rows = np.array([self.rows[s] for s in states]).reshape(len(states), self.n_actions)
        return {**head, "states": states, "rows": rows}

    @classmethod
    def from_arrays(cls, arrays: Any) -> "QTable":
        """Inverse of :meth:`to_arrays`."""
        n_states, n_actions = (int(v) for v in arrays["shape"])
        table = cls(n_states, n_actions, float(arrays["initial"]))
        if "q" in arrays:
            q = np.array(arrays["q"], dtype=float)
            if table.q is None or q.shape != table.q.shape:
                raise ValueError(f"dense table of shape {q.shape} does not match {table.n_states}x{table.n_actions}")
            table.q = q
        else:
            for state, row in zip(arrays["states"], arrays["rows"]):
                table.row(int(state))[:] = row
        return table

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QTable):
            return NotImplemented
        mine, theirs = self.to_arrays(), other.to_arrays()
        return mine.keys() == theirs.keys() and all(
            np.array_equal(mine[k], theirs[k]) for k in mine
        )


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

    def setup(self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]) -> None:
        super().setup(sensors, actuators)
        self.states = DiscreteEncoder([s for s in sensors if not is_action_mask(s.uid)], "sensor")
        self.actions = DiscreteEncoder(actuators, "actuator")
        self.table = QTable(self.states.size, self.actions.size, self.initial_q)

    def thinking(self, experience: Experience) -> QTable | None:
        if self.table is None or self.states is None or self.actions is None:
            raise RuntimeError("QLearningBrain.setup() must be called before thinking()")
        states, table, done = self.states, self.table, experience.done
        s = states.encode(experience.sensors)
        a = self.actions.encode(experience.actuators)
        target = float(experience.objective)
        if not done or experience.truncated:
            # max over a Python list: the same value as ndarray.max() (for
            # tables without NaN), several times faster on a short row
            target += self.gamma * max(table.values(states.encode(experience.next_sensors)).tolist())
        q = table.q
        if q is not None:  # dense: Python floats (the same IEEE arithmetic, faster than numpy scalars)
            old = q.item(s, a)
            q[s, a] = old + self.alpha * (target - old)
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
        self._masked = any(is_action_mask(s.uid) for s in sensors)
        self.states = DiscreteEncoder([s for s in sensors if not is_action_mask(s.uid)], "sensor")
        self.actions = DiscreteEncoder(actuators, "actuator")
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
        if self.mode == Mode.TRAIN:
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

    def propose_actions(
        self, sensors: list[SensorInformation], actuators: list[ActuatorInformation]
    ) -> list[ActuatorInformation]:
        if self.states is None or self.actions is None or self.table is None:
            self.setup(sensors, actuators)
        states, actions, rng = self.states, self.actions, self.rng
        assert states is not None and actions is not None and self.table is not None
        mask = action_mask(actuators[0], sensors) if self._masked and len(actuators) == 1 else None
        if mask is not None:  # legal moves only (PettingZoo's action_mask)
            if self.mode == Mode.TRAIN and rng.random() < self.current_epsilon:
                action = int(np.flatnonzero(mask)[int(rng.integers(int(mask.sum())))])
            else:
                values = self.table.values(states.encode(sensors))
                action = _greedy_action(np.where(mask, values, -np.inf), rng)
        elif self.mode == Mode.TRAIN and rng.random() < self.current_epsilon:
            action = int(rng.integers(actions.size))
        else:
            action = _greedy_action(self.table.values(states.encode(sensors)), rng)
        if actions._single and len(actuators) == 1 and actuators[0].uid == actions._single_id:
            (actuator,) = actuators  # one Discrete actuator: decode is action + start
            return [ActuatorInformation(actuator.uid, actuator.space, action + actions._single_start)]
        chosen = dict(zip(actions.ids, actions.decode(action)))
        return [
            ActuatorInformation(a.uid, a.space, chosen[a.uid] if a.uid in chosen else a.value)
            for a in actuators
        ]


def _greedy_action(values: np.ndarray, rng: np.random.Generator) -> int:
    """The index of the largest of ``values`` (one row of action values), ties
    broken uniformly with ``rng``.

    Equivalent to ``best = np.flatnonzero(values == values.max())`` and
    ``best[0]`` if it is unique, else ``rng.choice(best)`` — the same action
    and the same draws from ``rng`` — but on a Python list, which is several
    times faster for the short rows of a Q table. ``rng.choice(best)`` draws
    ``rng.integers(len(best))`` and indexes ``best`` with it, which is done here
    directly (``tests/agents/test_qlearning.py`` checks the equivalence).
    """
    row = values.tolist()
    best_value = max(row)
    if row.count(best_value) == 1:
        return row.index(best_value)
    best = [i for i, v in enumerate(row) if v == best_value]
    return best[int(rng.integers(len(best)))]
