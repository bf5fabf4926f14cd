import itertools

import numpy as np
import pytest
from gymnasium import spaces

from xdoe.agent import Experience, Mode
from xdoe.components.agents import DiscreteEncoder, QLearningBrain, QLearningMuscle, QTable
from xdoe.environment import ActuatorInformation as A
from xdoe.environment import RewardInformation
from xdoe.environment import SensorInformation as S

S_SPACE = spaces.Discrete(4)
A_SPACE = spaces.Discrete(3)


def exp(s, a, r, s2, done=False):
    return Experience(0, 0, 0, [S("e.s", S_SPACE, s)], [A("e.a", A_SPACE, a)],
                      [RewardInformation("e.r", r)], r, [S("e.s", S_SPACE, s2)], done)


def brain(**kw):
    b = QLearningBrain(seed=0, **kw)
    b.setup([S("e.s", S_SPACE)], [A("e.a", A_SPACE)])
    return b


# encoder ---------------------------------------------------------------

def test_encoder_is_a_bijection_over_mixed_spaces():
    items = [S("e.d", spaces.Discrete(3, start=-1)), S("e.m", spaces.MultiDiscrete([2, 3])),
             S("e.b", spaces.MultiBinary(2))]
    enc = DiscreteEncoder(items, "sensor")
    assert enc.size == 3 * 2 * 3 * 2 * 2
    seen = set()
    for d, m0, m1, b0, b1 in itertools.product(range(-1, 2), range(2), range(3), range(2), range(2)):
        values = [S("e.d", None, d), S("e.m", None, np.array([m0, m1])), S("e.b", None, np.array([b0, b1], np.int8))]
        index = enc.encode(values[::-1])  # matched by id, not position
        seen.add(index)
        decoded = enc.decode(index)
        assert decoded[0] == d and decoded[1].tolist() == [m0, m1] and decoded[2].tolist() == [b0, b1]
        assert all(item.space.contains(v) for item, v in zip(items, decoded))
    assert seen == set(range(enc.size))


def test_encoder_errors_name_the_item():
    with pytest.raises(ValueError, match=r"sensor e.x has Box"):
        DiscreteEncoder([S("e.x", spaces.Box(0, 1, (2,)))], "sensor")
    enc = DiscreteEncoder([S("e.s", S_SPACE), S("e.t", S_SPACE)], "sensor")
    with pytest.raises(ValueError, match="no value for sensor e.t"):
        enc.encode([S("e.s", S_SPACE, 1)])
    with pytest.raises(ValueError, match="e.s: 4 not in Discrete"):
        enc.encode([S("e.s", S_SPACE, 4), S("e.t", S_SPACE, 0)])
    with pytest.raises(ValueError, match="e.s: 1.5 is not an integer"):
        enc.encode([S("e.s", S_SPACE, 1.5), S("e.t", S_SPACE, 0)])
    single = DiscreteEncoder([S("e.s", S_SPACE)], "sensor")
    assert single.encode([S("e.s", S_SPACE, np.array([3]))]) == 3 == single.encode([S("e.s", S_SPACE, np.int8(3))])
    with pytest.raises(ValueError, match="e.s: 2.0 is not an integer"):
        single.encode([S("e.s", S_SPACE, 2.0)])
    with pytest.raises(ValueError, match="e.s: 7 not in Discrete"):
        DiscreteEncoder([S("e.s", S_SPACE)], "sensor").encode([S("e.s", S_SPACE, 7)])


def test_setup_rejects_continuous_spaces():
    with pytest.raises(ValueError, match="actuator e.a has Box"):
        QLearningBrain().setup([S("e.s", S_SPACE)], [A("e.a", spaces.Box(0, 1))])
    with pytest.raises(ValueError, match="sensor e.s has Box"):
        QLearningMuscle(uid="m").setup([S("e.s", spaces.Box(0, 1))], [A("e.a", A_SPACE)])


@pytest.mark.parametrize("kw", [{"alpha": 0}, {"alpha": 1.5}, {"gamma": -0.1}, {"alpha": "x"}])
def test_brain_parameter_ranges(kw):
    with pytest.raises(ValueError):
        QLearningBrain(**kw)


@pytest.mark.parametrize("kw", [{"epsilon": 2}, {"epsilon_decay": 0}, {"epsilon_min": -1}])
def test_muscle_parameter_ranges(kw):
    with pytest.raises(ValueError):
        QLearningMuscle(uid="m", **kw)


# learning rule --------------------------------------------------------

def test_update_rule():
    b = brain(alpha=0.5, gamma=0.9)
    q = b.table.q
    q[2] = [0.0, 4.0, 1.0]
    assert b.thinking(exp(1, 2, 1.0, 2)) is None
    assert q[1, 2] == pytest.approx(0.5 * (1.0 + 0.9 * 4.0))
    update = b.thinking(exp(1, 2, -2.0, 2, done=True))  # terminal: no bootstrap
    assert q[1, 2] == pytest.approx(2.3 + 0.5 * (-2.0 - 2.3))
    assert update is b.table and b.muscle_state() is b.table


def test_sparse_table_for_large_spaces():
    big = spaces.MultiDiscrete([10] * 8)
    b = QLearningBrain(alpha=1.0, gamma=0.5, initial_q=1.0)
    b.setup([S("e.s", big)], [A("e.a", A_SPACE)])
    assert not b.table.dense and b.table.n_states == 10**8
    s, s2 = np.arange(8), np.zeros(8, dtype=int)
    b.thinking(Experience(0, 0, 0, [S("e.s", big, s)], [A("e.a", A_SPACE, 1)], [], 3.0, [S("e.s", big, s2)], False))
    assert b.table.values(99).tolist() == [1.0, 1.0, 1.0]  # unvisited: initial_q, no row created
    assert len(b.table.rows) == 1 and b.table.rows[1234567].tolist() == [1.0, 3.5, 1.0]


# store / load ------------------------------------------------------------

def _train_some(b, rng, n=200):
    for _ in range(n):
        b.thinking(exp(int(rng.integers(4)), int(rng.integers(3)), float(rng.normal()), int(rng.integers(4)),
                       bool(rng.random() < 0.1)))


def test_store_load_round_trip_dense(tmp_path):
    b = brain(alpha=0.3)
    _train_some(b, np.random.default_rng(0))
    path = tmp_path / "q"  # no suffix added
    b.store(path)
    assert path.exists()
    other = brain()
    other.load(path)
    assert other.table == b.table and other.table is not b.table
    assert np.array_equal(other.table.q, b.table.q)
    fresh = QLearningBrain()  # load before setup works too
    fresh.load(path)
    assert fresh.table == b.table


def test_store_load_round_trip_sparse(tmp_path):
    big = spaces.MultiDiscrete([10] * 8)
    b = QLearningBrain(alpha=0.7)
    b.setup([S("e.s", big)], [A("e.a", A_SPACE)])
    rng = np.random.default_rng(1)
    for _ in range(50):
        s, s2 = rng.integers(10, size=8), rng.integers(10, size=8)
        b.thinking(Experience(0, 0, 0, [S("e.s", big, s)], [A("e.a", A_SPACE, int(rng.integers(3)))], [],
                              float(rng.normal()), [S("e.s", big, s2)], False))
    b.store(tmp_path / "q.npz")
    other = QLearningBrain()
    other.setup([S("e.s", big)], [A("e.a", A_SPACE)])
    other.load(tmp_path / "q.npz")
    assert other.table == b.table and len(other.table.rows) == len(b.table.rows) > 40


def test_load_mismatch_and_garbage(tmp_path):
    b = brain()
    b.store(tmp_path / "q")
    other = QLearningBrain()
    other.setup([S("e.other", S_SPACE)], [A("e.a", A_SPACE)])
    with pytest.raises(ValueError, match="does not fit"):
        other.load(tmp_path / "q")
    (tmp_path / "junk").write_text("hello")
    with pytest.raises(ValueError, match="not a QLearningBrain file"):
        other.load(tmp_path / "junk")


# muscle ---------------------------------------------------------------

def muscle(seed=0, **kw):
    m = QLearningMuscle(uid="m", seed=seed, **kw)
    m.setup([S("e.s", S_SPACE)], [A("e.a", A_SPACE)])
    return m


def act(m, s):
    (a,) = m.propose_actions([S("e.s", S_SPACE, s)], [A("e.a", A_SPACE)])
    assert a.uid == "e.a" and A_SPACE.contains(a.value) and type(a.value) is int
    return a.value


def test_greedy_in_test_mode_with_random_tie_breaking():
    b = brain()
    b.table.q[0] = [0.0, 5.0, 0.0]
    b.table.q[1] = [2.0, 0.0, 2.0]
    m = muscle(seed=1, epsilon=1.0)
    m.update(b.muscle_state())
    m.mode = Mode.TEST
    assert {act(m, 0) for _ in range(50)} == {1}
    ties = [act(m, 1) for _ in range(60)]
    assert set(ties) == {0, 2}
    m2 = muscle(seed=1, epsilon=1.0)
    m2.update(b.table)
    m2.mode = Mode.TEST
    act(m2, 0)  # no rng draw for a unique maximum
    assert [act(m2, 1) for _ in range(60)] == ties


def test_epsilon_exploration_rate():
    b = brain()
    b.table.q[0] = [0.0, 5.0, 0.0]
    m = muscle(seed=2, epsilon=0.3)
    m.update(b.table)
    choices = np.array([act(m, 0) for _ in range(3000)])
    assert np.mean(choices != 1) == pytest.approx(0.3 * 2 / 3, abs=0.03)


def test_epsilon_decay_per_train_episode():
    m = muscle(epsilon=0.5, epsilon_decay=0.5, epsilon_min=0.1)
    eps = []
    for _ in range(4):
        m.reset()
        eps.append(m.current_epsilon)
    m.mode = Mode.TEST
    m.reset()
    assert eps == [0.5, 0.25, 0.125, 0.1] and m.current_epsilon == 0.1 and m.train_episodes == 4


def test_joint_actions_over_several_actuators():
    acts = [A("e.a", spaces.Discrete(2)), A("e.b", spaces.MultiDiscrete([3]))]
    b = QLearningBrain()
    b.setup([S("e.s", S_SPACE)], acts)
    assert b.table.n_actions == 6
    b.table.q[0, 5] = 1.0
    m = QLearningMuscle(uid="m")
    m.setup([S("e.s", S_SPACE)], acts)
    m.update(b.table)
    m.mode = Mode.TEST
    out = m.propose_actions([S("e.s", S_SPACE, 0)], acts)
    assert out[0].value == 1 and out[1].value.tolist() == [2]
    assert all(a.space.contains(a.value) for a in out)


def test_muscle_rejects_foreign_updates():
    m = muscle()
    with pytest.raises(ValueError, match="does not fit"):
        m.update(QTable(5, 3))
    with pytest.raises(TypeError):
        m.update({"q": 1})
    m.update(None)  # ignored


# fast paths: the same results as the general numpy formulation -----------

def _reference_action(muscle, table, state):
    """The muscle's action as first written: numpy argmax set and rng.choice."""
    if muscle.mode == Mode.TRAIN and muscle.rng.random() < muscle.current_epsilon:
        return int(muscle.rng.integers(table.shape[1]))
    values = table[state]
    best = np.flatnonzero(values == values.max())
    return int(best[0]) if best.size == 1 else int(muscle.rng.choice(best))


@pytest.mark.parametrize("mode", [Mode.TRAIN, Mode.TEST])
def test_muscle_actions_and_draws_equal_the_numpy_reference(mode):
    b = brain()
    table_rng = np.random.default_rng(4)
    # few distinct values, so that many rows have ties of 2 or 3 actions
    b.table.q[:] = table_rng.integers(0, 2, size=b.table.q.shape).astype(float)
    fast, ref = muscle(seed=9, epsilon=0.3), muscle(seed=9, epsilon=0.3)
    fast.update(b.table)
    fast.mode = ref.mode = mode
    states = table_rng.integers(0, S_SPACE.n, size=400)
    assert [act(fast, int(s)) for s in states] == [_reference_action(ref, b.table.q, int(s)) for s in states]
    assert fast.rng.random() == ref.rng.random()  # the same number of draws


def test_brain_updates_equal_the_numpy_reference():
    b = brain(alpha=0.3, gamma=0.9)
    q = np.zeros((S_SPACE.n, A_SPACE.n))
    rng = np.random.default_rng(5)
    for _ in range(500):
        s, a, s2 = int(rng.integers(4)), int(rng.integers(3)), int(rng.integers(4))
        r, done = float(rng.normal()), bool(rng.random() < 0.2)
        b.thinking(exp(s, np.int64(a) if rng.random() < 0.5 else a, r, s2, done))
        target = r + (0.0 if done else 0.9 * float(q[s2].max()))
        q[s, a] += 0.3 * (target - q[s, a])
    assert np.array_equal(b.table.q, q)


def test_single_discrete_encoder_fast_path():
    enc = DiscreteEncoder([S("e.s", spaces.Discrete(5, start=3))], "sensor")
    for value in (3, 7, np.int64(5), np.int8(4), 6):
        index = enc.encode([S("e.s", None, value)])
        assert type(index) is int and index == int(value) - 3
        assert enc.decode(index) == [int(value)] and type(enc.decode(index)[0]) is int
    assert enc.encode([S("e.s", None, np.array(6))]) == 3  # 0-d arrays take the general path
    for bad in (2, 8, np.int64(8)):
        with pytest.raises(ValueError, match=r"sensor e.s: .* not in Discrete\(5, start=3\)"):
            enc.encode([S("e.s", None, bad)])
    with pytest.raises(ValueError, match="no value for sensor e.s"):
        enc.encode([S("e.other", None, 4)])
    assert enc.decode(5 + 2) == [2 + 3]  # out-of-range indices wrap, as the general path does


def test_truncation_bootstraps_and_termination_does_not():
    def last_step(truncated):
        b = brain(alpha=1.0, gamma=0.5)
        b.table.q[2, :] = 4.0  # Q(s'=2, .) = 4
        e = Experience(0, 0, 0, [S("e.s", S_SPACE, 1)], [A("e.a", A_SPACE, 0)],
                       [RewardInformation("e.r", 1.0)], 1.0, [S("e.s", S_SPACE, 2)], True, {}, truncated)
        b.thinking(e)
        return b.table.q[1, 0]

    assert last_step(truncated=False) == 1.0  # r only: a terminal state has no future
    assert last_step(truncated=True) == 1.0 + 0.5 * 4.0  # r + gamma * max Q(s') at a time limit


def test_muscle_single_discrete_fast_path_equals_the_general_path():
    """One Discrete sensor and actuator (with ``start`` offsets) take the
    inlined path of propose_actions; numpy ints, a sparse table or a second
    sensor take the general one: the same actions, draws and errors."""
    s_space, a_space = spaces.Discrete(6, start=2), spaces.Discrete(4, start=-1)
    sensors, actuators = [S("e.s", s_space)], [A("e.a", a_space)]
    q = np.random.default_rng(3).integers(0, 2, size=(6, 4)).astype(float)
    fast, general = (QLearningMuscle(uid="m", seed=5, epsilon=0.25) for _ in range(2))
    for m in (fast, general):
        m.setup(sensors, actuators)
        m.update(QTable.from_arrays({"shape": np.array([6, 4]), "initial": np.array(0.0), "q": q}))
    assert fast._direct == (2, 8, -1, 3)  # Discrete(6, start=2), Discrete(4, start=-1)
    general._direct = (0, 0, 0, 0)  # empty: forces the general path
    values = [int(v) for v in np.random.default_rng(8).integers(2, 8, size=300)]
    got = [fast.propose_actions([S("e.s", s_space, v)], [A("e.a", a_space)])[0].value for v in values]
    want = [general.propose_actions([S("e.s", s_space, v)], [A("e.a", a_space)])[0].value for v in values]
    assert got == want and all(type(v) is int and a_space.contains(v) for v in got)
    assert fast.rng.random() == general.rng.random()
    # a numpy value falls back to the general path with the same answer
    fast.mode = general.mode = Mode.TEST
    assert (fast.propose_actions([S("e.s", s_space, np.int64(4))], [A("e.a", a_space)])[0].value
            == general.propose_actions([S("e.s", s_space, 4)], [A("e.a", a_space)])[0].value)
    for m in (fast, general):
        with pytest.raises(ValueError, match=r"sensor e.s: 8 not in Discrete\(6, start=2\)"):
            m.propose_actions([S("e.s", s_space, 8)], [A("e.a", a_space)])


def test_value_forms_equal_the_object_forms():
    """propose_values and thinking_values (what the executor calls: Taxi's
    single Discrete sensor and actuator answered directly, with ``start``
    offsets) give the same actions, draws and table as propose_actions and
    thinking; a subclass that writes only propose_actions is used through it."""
    s_space, a_space = spaces.Discrete(5, start=3), spaces.Discrete(3, start=1)
    values, objects = QLearningBrain(seed=0, alpha=0.4, gamma=0.8), QLearningBrain(seed=0, alpha=0.4, gamma=0.8)
    m_values, m_objects = QLearningMuscle("m", seed=5, epsilon=0.3), QLearningMuscle("m", seed=5, epsilon=0.3)
    for component in (values, objects, m_values, m_objects):
        component.setup([S("e.s", s_space)], [A("e.a", a_space)])
    rng = np.random.default_rng(6)
    for _ in range(400):
        s, s2 = int(rng.integers(3, 8)), int(rng.integers(3, 8))
        a = m_values.propose_values(s)
        (acted,) = m_objects.propose_actions([S("e.s", s_space, s)], [A("e.a", a_space)])
        assert a == acted.value and type(a) is int
        r, done, truncated = float(rng.normal()), bool(rng.random() < 0.2), bool(rng.random() < 0.5)
        answer = values.thinking_values(0, 0, 0, s, a, {"e.r": r}, r, s2, done, {}, truncated)
        assert (answer is values.table) == done
        objects.thinking(Experience(0, 0, 0, [S("e.s", s_space, s)], [A("e.a", a_space, a)], [], r,
                                    [S("e.s", s_space, s2)], done, {}, truncated))
        for m in (m_values, m_objects):
            m.update(values.table if m is m_values else objects.table)
    assert np.array_equal(values.table.q, objects.table.q) and values.table.q.any()
    # an observation outside the fast path (numpy int) takes the objects' path: the same action
    assert m_values.propose_values(np.int64(4)) in (1, 2, 3)

    class Always(QLearningMuscle):
        def propose_actions(self, sensors, actuators):
            return [A(a.uid, a.space, a.space.start) for a in actuators]

    always = Always("m", seed=5)
    always.setup([S("e.s", s_space)], [A("e.a", a_space)])
    assert [always.propose_values(s) for s in range(3, 8)] == [1] * 5


def test_brain_single_discrete_fast_path_equals_the_general_path():
    """thinking's inlined path (one Discrete sensor and actuator, int values,
    dense table; ``start`` offsets) updates the table exactly as the general one."""
    s_space, a_space = spaces.Discrete(5, start=3), spaces.Discrete(3, start=1)
    fast, general = QLearningBrain(seed=0, alpha=0.4, gamma=0.8), QLearningBrain(seed=0, alpha=0.4, gamma=0.8)
    for b in (fast, general):
        b.setup([S("e.s", s_space)], [A("e.a", a_space)])
    assert fast._direct == (3, 8, 1, 4)
    general._direct = (0, 0, 0, 0)
    rng = np.random.default_rng(6)
    for _ in range(400):
        s, a, s2 = int(rng.integers(3, 8)), int(rng.integers(1, 4)), int(rng.integers(3, 8))
        r, done, truncated = float(rng.normal()), bool(rng.random() < 0.2), bool(rng.random() < 0.5)
        for b in (fast, general):
            e = Experience(0, 0, 0, [S("e.s", s_space, s)], [A("e.a", a_space, a)], [], r,
                           [S("e.s", s_space, s2)], done, {}, truncated)
            assert (b.thinking(e) is b.table) == done
    assert np.array_equal(fast.table.q, general.table.q) and fast.table.q.any()
    for b in (fast, general):  # out-of-space values: the general path's error
        with pytest.raises(ValueError, match=r"actuator e.a: 4 not in Discrete\(3, start=1\)"):
            b.thinking(Experience(0, 0, 0, [S("e.s", s_space, 3)], [A("e.a", a_space, 4)], [], 0.0,
                                  [S("e.s", s_space, 3)], False))
        # below the start (an index that would wrap to the end of the table): the general path's error
        with pytest.raises(ValueError, match=r"sensor e.s: 2 not in Discrete\(5, start=3\)"):
            b.thinking_values(0, 0, 0, 3, 1, {}, 0.0, 2, False, {}, False)
        with pytest.raises(ValueError, match=r"actuator e.a: 0 not in Discrete\(3, start=1\)"):
            b.thinking_values(0, 0, 0, 3, 0, {}, 0.0, 3, False, {}, False)
