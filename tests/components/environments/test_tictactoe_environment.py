import numpy as np
import pytest
from gymnasium import spaces

from xdoe.environment import ActuatorInformation
from xdoe.components.environments import TicTacToeEnvironment

D9 = spaces.Discrete(9)


def move(env, player, cell, other=None):
    acts = [ActuatorInformation(f"t.move_{player}", D9, cell)]
    if other is not None:
        acts.append(ActuatorInformation(f"t.move_{'o' if player == 'x' else 'x'}", D9, other))
    return env.update(acts)


def rewards(state):
    return {r.uid: r.value for r in state.rewards}


def sensors(state):
    return {s.uid: s.value for s in state.sensors}


def play(env, moves):
    env.start_environment()
    state = None
    for i, cell in enumerate(moves):
        state = move(env, "xo"[i % 2], cell)
    return state


def test_ids_and_spaces():
    env = TicTacToeEnvironment(uid="t", seed=0)
    base = env.start_environment()
    assert [(s.uid, s.space) for s in base.sensors] == [
        ("t.board", spaces.MultiDiscrete([3] * 9)), ("t.turn", spaces.Discrete(2))]
    assert [(a.uid, a.space) for a in base.actuators] == [("t.move_x", D9), ("t.move_o", D9)]
    assert all(s.space.contains(s.value) for s in base.sensors)
    assert sensors(base)["t.turn"] == 0 and not sensors(base)["t.board"].any()


def test_x_wins_row():
    state = play(TicTacToeEnvironment(uid="t", seed=0), [0, 3, 1, 4, 2])
    assert state.done and rewards(state) == {"t.reward_x": 1.0, "t.reward_o": -1.0}
    assert state.info == {"winner": "x"}
    assert list(sensors(state)["t.board"]) == [1, 1, 1, 2, 2, 0, 0, 0, 0]


def test_o_wins_diagonal_and_turns_alternate():
    env = TicTacToeEnvironment(uid="t", seed=0)
    env.start_environment()
    turns = []
    for i, cell in enumerate([1, 2, 3, 4, 5, 6]):
        state = move(env, "xo"[i % 2], cell)
        turns.append(sensors(state)["t.turn"])
    assert turns[:-1] == [1, 0, 1, 0, 1]
    assert state.done and rewards(state) == {"t.reward_x": -1.0, "t.reward_o": 1.0}


def test_draw():
    # X O X / X O O / O X X
    state = play(TicTacToeEnvironment(uid="t", seed=0), [0, 1, 2, 4, 3, 5, 7, 6, 8])
    assert state.done and rewards(state) == {"t.reward_x": 0.0, "t.reward_o": 0.0}
    assert state.info == {"winner": "draw"}


def test_ongoing_rewards_are_zero():
    env = TicTacToeEnvironment(uid="t", seed=0)
    env.start_environment()
    state = move(env, "x", 4)
    assert not state.done and rewards(state) == {"t.reward_x": 0.0, "t.reward_o": 0.0}


def test_occupied_cell_ends_the_game_and_the_mover_loses():
    env = TicTacToeEnvironment(uid="t", seed=0)
    env.start_environment()
    move(env, "x", 4)
    state = move(env, "o", 4)
    assert state.done and rewards(state) == {"t.reward_x": 0.0, "t.reward_o": -1.0}
    assert state.info == {"illegal_move": 4, "player": "o", "winner": None}
    with pytest.raises(RuntimeError):
        move(env, "x", 0)


def test_out_of_turn_actuator_is_ignored():
    env = TicTacToeEnvironment(uid="t", seed=0)
    env.start_environment()
    state = move(env, "o", 4)  # X is to move: nothing happens
    assert not state.done and not sensors(state)["t.board"].any() and sensors(state)["t.turn"] == 0
    state = move(env, "x", 0, other=8)  # both set (vanilla controller): only X's applies
    assert list(sensors(state)["t.board"]) == [1, 0, 0, 0, 0, 0, 0, 0, 0]


def test_move_outside_the_board_is_an_error():
    env = TicTacToeEnvironment(uid="t", seed=0)
    env.start_environment()
    with pytest.raises(ValueError, match="t.move_x"):
        move(env, "x", 9)
    with pytest.raises(ValueError, match="t.move_x"):
        move(env, "x", 1.5)


def test_random_opponent():
    def game(seed):
        env = TicTacToeEnvironment(uid="t", seed=seed, opponent="random")
        base = env.start_environment()
        assert [a.uid for a in base.actuators] == ["t.move_x"]
        boards, state = [], None
        for _ in range(5):
            board = sensors(state or base)["t.board"]
            state = move(env, "x", int(np.flatnonzero(board == 0)[0]))  # always a legal move
            assert [r.uid for r in state.rewards] == ["t.reward_x"]
            assert state.done or sensors(state)["t.turn"] == 0
            boards.append(sensors(state)["t.board"].tolist())
            if state.done:
                break
        assert state.done
        assert "illegal_move" not in state.info
        return boards

    games = [game(seed) for seed in range(6)]
    assert game(3) == games[3]
    assert len({str(g) for g in games}) > 1
    # the opponent answers every non-final move of X
    for boards in games:
        for board in boards[:-1]:
            assert board.count(1) == board.count(2)


def test_bad_opponent():
    with pytest.raises(ValueError, match="opponent"):
        TicTacToeEnvironment(uid="t", seed=0, opponent="minimax")
