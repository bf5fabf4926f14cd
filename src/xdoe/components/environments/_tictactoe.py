"""Tic-tac-toe for two agents taking turns (or one agent against a random opponent)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)

__all__ = ["TicTacToeEnvironment"]

EMPTY, X, O = 0, 1, 2
_LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)  # fmt: skip


def winner(board: np.ndarray) -> int:
    """``X`` (1) or ``O`` (2) when that player has three in a line, else 0."""
    for a, b, c in _LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return int(board[a])
    return EMPTY


class TicTacToeEnvironment(Environment):
    """Tic-tac-toe on a 3x3 board; X moves first.

    Parameters:
        uid: the environment uid (prefix of every id).
        seed: seeds :attr:`rng` (used only by the built-in opponent).
        opponent: ``None`` (default): two agents play, one with ``<uid>.move_x``,
            the other with ``<uid>.move_o``; ``"random"``: the environment plays
            O itself, a uniformly random free cell right after each move of X,
            and offers only ``<uid>.move_x`` / ``<uid>.reward_x``.

    Sensors:
        - ``<uid>.board``: ``MultiDiscrete([3] * 9)``, cells row by row
          (index ``3 * row + column``), 0 empty, 1 X, 2 O;
        - ``<uid>.turn``: ``Discrete(2)``, the player to move: 0 X, 1 O.

    Actuators: ``<uid>.move_x`` and ``<uid>.move_o``, ``Discrete(9)``: the cell
    to mark.

    Rewards: ``<uid>.reward_x`` and ``<uid>.reward_o``, emitted at every
    update and attributed per player (``owner`` ``<uid>.move_x`` /
    ``<uid>.move_o``): each agent receives only its own. +1 to the winner and
    -1 to the loser on the move that ends the game, 0 for a draw and while
    the game goes on. A finished game is ``terminated``.

    The environment decides whose move it is. An update applies only the
    actuator of the player to move; the other player's actuator is ignored
    (so a ``VanillaSimController`` where both agents act every step works as
    well as a ``TakingTurnsSimController``). An update that does not set the
    mover's actuator changes nothing (rewards 0, same player to move).

    Illegal move: marking an occupied cell ends the game at once; the mover
    gets -1 and the other player 0 (the convention of PettingZoo's
    ``TerminateIllegalWrapper``), so learning agents quickly learn to avoid
    it without the opponent being rewarded for it. The state's ``info`` then
    holds ``{"illegal_move": cell, "player": "x"|"o"}``; at the end of every
    game it holds ``{"winner": "x"|"o"|"draw"|None}`` (None after an illegal move).

    Raises:
        ValueError: ``opponent`` is not ``None`` or ``"random"``; a move is not
            an integer 0..8.
    """

    def __init__(self, uid: str, seed: int, opponent: str | None = None) -> None:
        super().__init__(uid=uid, seed=seed)
        if opponent not in (None, "random"):
            raise ValueError(f"opponent must be null or 'random', got {opponent!r}")
        self.opponent = opponent
        self.board = np.zeros(9, dtype=np.int64)
        self.to_move = X
        self.done = False

    # ids and spaces -------------------------------------------------------
    def _players(self) -> tuple[str, ...]:
        return ("x",) if self.opponent else ("x", "o")

    def _sensors(self) -> list[SensorInformation]:
        return [
            SensorInformation(self.full_id("board"), spaces.MultiDiscrete([3] * 9), self.board.copy()),
            SensorInformation(self.full_id("turn"), spaces.Discrete(2), 0 if self.to_move == X else 1),
        ]

    def _rewards(self, values: dict[str, float]) -> list[RewardInformation]:
        return [
            RewardInformation(self.full_id(f"reward_{p}"), float(values.get(p, 0.0)),
                              owner=self.full_id(f"move_{p}"))
            for p in self._players()
        ]

    # lifecycle ------------------------------------------------------------
    def start_environment(self) -> EnvironmentBaseline:
        """Empty board, X to move."""
        self.board[:] = EMPTY
        self.to_move = X
        self.done = False
        actuators = [
            ActuatorInformation(self.full_id(f"move_{p}"), spaces.Discrete(9))
            for p in self._players()
        ]
        return EnvironmentBaseline(sensors=self._sensors(), actuators=actuators)

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        """Apply the move of the player to move (see the class docstring)."""
        if self.done:
            raise RuntimeError("the game is over; call start_environment() first")
        player = "x" if self.to_move == X else "o"
        move_id = self.full_id(f"move_{player}")
        value = next((a.value for a in actuators if a.uid == move_id and a.value is not None), None)
        if value is None:
            return EnvironmentState(self._sensors(), self._rewards({}), False, {})
        cell = self._cell(move_id, value)
        rewards, info = self._play(player, cell)
        if not self.done and self.opponent == "random":
            free = np.flatnonzero(self.board == EMPTY)
            rewards, info = self._play("o", int(self.rng.choice(free)))
        return EnvironmentState(self._sensors(), self._rewards(rewards), self.done, info)

    def _cell(self, move_id: str, value: Any) -> int:
        cell = np.asarray(value)
        if cell.size != 1 or not np.issubdtype(cell.dtype, np.integer) or not 0 <= cell.item() <= 8:
            raise ValueError(f"{move_id} must be an integer 0..8, got {value!r}")
        return int(cell.item())

    def _play(self, player: str, cell: int) -> tuple[dict[str, float], dict[str, Any]]:
        other = "o" if player == "x" else "x"
        if self.board[cell] != EMPTY:
            self.done = True
            return {player: -1.0, other: 0.0}, {"illegal_move": cell, "player": player, "winner": None}
        self.board[cell] = X if player == "x" else O
        self.to_move = O if player == "x" else X
        if winner(self.board):
            self.done = True
            return {player: 1.0, other: -1.0}, {"winner": player}
        if not (self.board == EMPTY).any():
            self.done = True
            return {}, {"winner": "draw"}
        return {}, {}
