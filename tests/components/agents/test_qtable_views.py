"""QTable.views: the dense table's rows as kept views of ``q``, what the
Q-learning brain and muscle read and write at every step."""

import copy
import pickle

import numpy as np
from gymnasium import spaces

from xdoe.components.agents import QLearningBrain, QLearningMuscle, QTable, _qtable
from xdoe.environment import ActuatorInformation as A
from xdoe.environment import SensorInformation as S

S_SPACE, A_SPACE = spaces.Discrete(5), spaces.Discrete(3)


def _brain() -> QLearningBrain:
    b = QLearningBrain(seed=0, alpha=0.5, gamma=0.9)
    b.setup([S("e.s", S_SPACE)], [A("e.a", A_SPACE)])
    return b


def _learn(b: QLearningBrain, steps: int = 200, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        s, a, s2 = (int(v) for v in (rng.integers(5), rng.integers(3), rng.integers(5)))
        b.thinking_values(0, 0, 0, s, a, {"e.r": 1.0}, float(rng.normal()), s2, False, {}, False)


def test_views_are_the_rows_of_q_and_kept():
    b = _brain()
    _learn(b)
    table = b.table
    assert table.views is not None and set(table.views) <= set(range(5)) and table.views
    for state, row in table.views.items():
        assert np.shares_memory(row, table.q) and np.array_equal(row, table.q[state])
        assert table.views[state] is row  # kept, not made again
    table.q[2, 1] = 7.0  # in place: seen through the view
    assert table.views[2][1] == 7.0
    assert QTable(10**6, 10).views is None  # sparse: no views


def test_assigning_q_makes_new_views():
    b = _brain()
    _learn(b)
    fresh = np.zeros((5, 3))
    b.table.q = fresh
    assert not b.table.views
    b.thinking_values(0, 0, 0, 1, 2, {"e.r": 1.0}, 1.0, 3, False, {}, False)
    assert fresh[1, 2] == 0.5 and np.shares_memory(b.table.views[1], fresh)


def test_pickled_and_copied_tables_make_their_own_views():
    b = _brain()
    _learn(b)
    for other in (pickle.loads(pickle.dumps(b.table)), copy.deepcopy(b.table)):
        assert other == b.table and not other.views
        other.views[4][0] = 3.5
        assert other.q[4, 0] == 3.5 and b.table.q[4, 0] != 3.5
    muscle = QLearningMuscle("m", seed=0)
    muscle.setup([S("e.s", S_SPACE)], [A("e.a", A_SPACE)])
    muscle.update(pickle.loads(pickle.dumps(b.table)))
    assert muscle.propose_values(0) in (0, 1, 2)


def test_a_table_pickled_before_the_views_loads():
    table = QTable(5, 3)
    table.q[1] = [1.0, 2.0, 3.0]
    old = QTable.__new__(QTable)
    state = {k: v for k, v in table.__dict__.items() if k not in ("_q", "views")}
    old.__setstate__({**state, "q": table.q.copy()})  # the attributes of a table pickled before
    assert old == table and old.views[1].tolist() == [1.0, 2.0, 3.0]


def test_views_beyond_the_limit_are_made_at_each_use(monkeypatch):
    full, limited = _brain(), _brain()
    _learn(full)
    monkeypatch.setattr(_qtable, "VIEW_LIMIT", 2)
    _learn(limited)
    assert len(limited.table.views) == 2 and len(full.table.views) == 5
    assert np.array_equal(limited.table.q, full.table.q) and limited.table.q.any()
