"""The data structures of tabular Q-learning: :class:`DiscreteEncoder`
(joint discrete values as table indices) and :class:`QTable`."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

from xdoe.environment import ActuatorInformation, SensorInformation

__all__ = ["DENSE_LIMIT", "VIEW_LIMIT", "DiscreteEncoder", "QTable"]

#: Tables with at most this many entries (states x actions) are dense numpy
#: arrays (32 MiB of float64); larger ones keep a row only for visited states.
DENSE_LIMIT = 2**22

#: A dense table keeps the row views of at most this many states
#: (:attr:`QTable.views`, ~180 bytes each: at most ~12 MiB).
VIEW_LIMIT = 2**16


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
        items are ignored): :meth:`encode_values` of ``{uid: value}``."""
        return self.encode_values({item.uid: item.value for item in items})

    def encode_values(self, values: Any) -> int:
        """The index of a joint value in its value form (the form of the
        executor's observations and actions): a dict ``id -> value`` (extra
        ids are ignored), or with one item the value itself. Raises
        ``ValueError`` for a missing id or a value outside its space."""
        by_id = values if type(values) is dict else None
        if self._single:  # one Discrete item: Python ints only (numpy calls cost microseconds a step)
            value = values if by_id is None else by_id.get(self._single_id)
            if type(value) is int or isinstance(value, np.integer):
                digit = (value if type(value) is int else int(value)) - self._single_start
                if 0 <= digit < self.size:
                    return digit
                raise ValueError(f"{self.kind} {self.ids[0]}: {value!r} not in {self.spaces[0]}")
        if by_id is None:
            if len(self.ids) != 1:
                raise ValueError(f"the {self.kind}s {self.ids} take a dict id -> value, got {values!r}")
            by_id = {self.ids[0]: values}
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

    A dense table's rows are also reached through :attr:`views`, a mapping
    ``state -> q[state]`` whose views (the same memory as :attr:`q`) are made
    at their first use and kept, for at most :data:`VIEW_LIMIT` states: what
    :class:`QLearningBrain` and :class:`QLearningMuscle` read and write at
    every step, where ``q[state]`` would make a new view each time. Writes
    through :attr:`q` (in place) are seen through the views; assigning
    :attr:`q` makes new views; a pickled or copied table makes its own.

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
        self.rows: dict[int, np.ndarray] = {}
        self.q = np.full((self.n_states, self.n_actions), self.initial) if self.dense else None

    @property
    def q(self) -> np.ndarray | None:
        """The dense table, an array ``(n_states, n_actions)`` of float64 (writable
        in place); ``None`` for a sparse table. Setting it resets :attr:`views`."""
        return self._q

    @q.setter
    def q(self, q: np.ndarray | None) -> None:
        self._q = q
        #: the rows of the dense table by state, ``q[state]`` (views: the same memory), each
        #: made on first use and kept (up to :data:`VIEW_LIMIT` states): a Q-learning step reads
        #: two rows and writes one, and numpy's indexing makes a new view at every ``q[state]``
        #: (~1k instructions, more than the row's use). ``None`` for a sparse table. Indices are
        #: row numbers ``0 .. n_states-1`` (Python ints).
        self.views: _RowViews | None = None if q is None else _RowViews(q)

    def __getstate__(self) -> dict[str, Any]:
        # the views are rebuilt, not pickled: a pickled view becomes a copy, no longer the table's row
        state = self.__dict__.copy()
        del state["views"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        q = state.pop("_q", state.pop("q", None))  # "q": a table pickled before the views existed
        self.__dict__.update(state)
        self.q = q

    def values(self, state: int) -> np.ndarray:
        """The action values of ``state`` (read only: do not modify)."""
        if self._q is not None:
            return self._q[state]
        return self.rows.get(state, self._default)

    def row(self, state: int) -> np.ndarray:
        """The writable action values of ``state``."""
        if self._q is not None:
            return self._q[state]
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
            table.q = q  # (the setter makes its views)
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


class _RowViews(dict):  # type: ignore[type-arg]
    """``state -> q[state]`` for the dense table ``q``: a row view is made at
    the first ``views[state]`` and kept while fewer than :data:`VIEW_LIMIT` are
    (later ones are made at every use, as ``q[state]`` is)."""

    __slots__ = ("q",)

    def __init__(self, q: np.ndarray) -> None:
        super().__init__()
        self.q = q

    def __missing__(self, state: int) -> np.ndarray:
        row = self.q[state]
        if len(self) < VIEW_LIMIT:
            self[state] = row
        return row
