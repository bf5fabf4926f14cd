"""``RunRecorder.step_writer``: the one writer of step rows. The executor's
value-form writer (one sensor's value, one actuator's value) stores the same
cells and ``all_transactions.csv`` bytes as ``RunRecorder.step`` with the
dicts, which are json's own text, also where the writer keeps texts (equal
numbers of different texts: ``0.0``/``-0.0``, ``1``/``1.0``/``True``); it
stores the steps the policy wants; it is made once per key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from xdoe.store import Store
from xdoe.store.recorder import _cells as rows_module
from xdoe.store._json import json_default

KEYS = ("taxi.observation", "taxi.action", "taxi.reward")
NAN = float("nan")
#: (observation, action, reward, objective): numbers that are equal with different texts, one after the
#: other, NaN (equal to nothing, not even itself), and values the encoder writes
VALUES = [(0, 1, -1.0, -1.0), (0.0, 1.0, 0.0, 0.0), (-0.0, True, -0.0, -0.0), (0.0, 1, 0.0, 1.0),
          (-0.0, 1.0, -0.0, 2.0), (1, 1, 1.0, 1.0), (1.0, 1, 1, 1.0), (True, False, 1.0, 0.5),
          (NAN, NAN, NAN, NAN), (NAN, 2, float("inf"), float("-inf")), (np.int64(3), np.float64(0.5), 20.0, 3.0),
          (10**30, -(10**30), 5e-324, 1e300), ([1, 2], {"b": 1, "a": 2}, -10.0, 0.0), (None, "x\u00e9\"", 0.1, 0.0),
          (7, 3, -1.0, -1.0), (7, 3, -1.0, -1.0)]


def _text(key: str, value: Any) -> str:
    return json.dumps({key: value}, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=json_default)


def _record(tmp_path: Path, document: dict, name: str, write: Any, store_steps: str = "all",
            steps: list[tuple[int, int, bool]] | None = None) -> tuple[list[tuple], bytes]:
    """Rows written by ``write(rec, episode, step, done, obs, action, reward, objective)``."""
    store = Store(f"sqlite:///{tmp_path / f'{name}.sqlite'}")
    try:
        rec = store.recorder(document, results_root=tmp_path / name, store_steps=store_steps, flush_rows=5)
        rec.start()
        rec.phase_started(0, "training", "train", {"worker": 1})
        for i, (obs, action, reward, objective) in enumerate(VALUES):
            episode, step, done = steps[i] if steps else (i // 4, i % 4, i % 4 == 3)
            write(rec, episode, step, done, obs, action, reward, objective)
        rec.finish("finished")
        with store.database.engine.connect() as con:
            cells = [tuple(r) for r in con.execute(sa.text(
                "SELECT worker, episode, step, agent, sensors, actions, rewards, objective, done, terminated,"
                " truncated, cut_by FROM step ORDER BY id"))]
        return cells, (rec.results_dir / "all_transactions.csv").read_bytes()
    finally:
        store.close()


def _by_step(rec: Any, episode: int, step: int, done: bool, obs: Any, action: Any, reward: Any,
             objective: float) -> None:
    rec.step(2, episode, step, "learner", {KEYS[0]: obs}, {KEYS[1]: action}, {KEYS[2]: reward}, objective, done,
             done, False, "x" if done else None)


def _by_writer(rec: Any, episode: int, step: int, done: bool, obs: Any, action: Any, reward: Any,
               objective: float) -> None:
    write = rec.step_writer(2, "learner", KEYS[0], KEYS[1])
    write(episode, step, obs, action, {KEYS[2]: reward}, objective, done, done, False, "x" if done else None)


def test_the_value_form_writer_stores_what_step_stores_and_json_writes(tmp_path: Path, make_document: Any) -> None:
    document = make_document()
    by_step = _record(tmp_path, document, "step", _by_step)
    by_writer = _record(tmp_path, document, "writer", _by_writer)
    assert by_writer == by_step
    cells = by_writer[0]
    assert len(cells) == len(VALUES)
    assert [c[4:7] for c in cells] == [(_text(KEYS[0], o), _text(KEYS[1], a), _text(KEYS[2], r))
                                       for o, a, r, _ in VALUES]
    assert [c[4] for c in cells[:5]] == ['{"taxi.observation":0}', '{"taxi.observation":0.0}',
                                         '{"taxi.observation":-0.0}', '{"taxi.observation":0.0}',
                                         '{"taxi.observation":-0.0}']
    assert [c[5] for c in cells[5:8]] == ['{"taxi.action":1}', '{"taxi.action":1}', '{"taxi.action":false}']
    assert [c[8:] for c in cells[:4]] == [(0, 0, 0, None), (0, 0, 0, None), (0, 0, 0, None), (1, 1, 0, "x")]


def test_the_writer_stores_the_steps_the_policy_wants(tmp_path: Path, make_document: Any) -> None:
    steps = [(0, s, s == 5) for s in range(6)] + [(1, s, s == 9) for s in range(10)]
    cells, _ = _record(tmp_path, make_document(), "every", _by_writer, "every:3", steps)
    assert [(c[1], c[2]) for c in cells] == [(0, 0), (0, 3), (0, 5), (1, 0), (1, 3), (1, 6), (1, 9)]


def test_one_writer_per_key_none_without_stored_steps(tmp_path: Path, make_document: Any) -> None:
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as store:
        rec = store.recorder(make_document(), results_root=tmp_path / "r", store_steps="all")
        assert rec.step_writer(0, "a", "s", "u") is rec.step_writer(0, "a", "s", "u")
        assert rec.step_writer(0, "a", "s", "u") is not rec.step_writer(1, "a", "s", "u")
        assert store.recorder(make_document(), results_root=tmp_path / "r").step_writer(0, "a", "s", "u") is None
        write = rec.step_writer(0, "a", "s", "u")
        with pytest.raises(Exception, match="recorder used before start"):
            write(0, 0, 1, 1, {"r": 1.0}, 1.0, False)


def test_kept_texts_stay_bounded_and_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "_MAX_KEPT", 8)
    cell = rows_module._key_cells("k")
    values = [v for i in range(40) for v in (i, float(i) + 0.5, -float(i) - 0.25)]
    for value in values + values[::-1]:
        assert cell(value) == _text("k", value)
    assert all(len(c.cell_contents) <= 8 for c in cell.__closure__ if isinstance(c.cell_contents, dict))


@pytest.mark.parametrize("n", [0, 1, 2, 63, 64, 65, 100, 127, 200])
def test_positional_inserts_cover_the_rows_in_order_in_few_statements(n: int) -> None:
    rows = [(i, f"r{i}", None) for i in range(n)]
    statements = list(rows_module.positional_inserts("INSERT INTO t (a, b, c) VALUES (?, ?, ?)", rows))
    values = [v for _, params in statements for v in params]
    assert values == [v for row in rows for v in row]
    for sql, params in statements:
        assert sql.startswith("INSERT INTO t (a, b, c) VALUES (?, ?, ?)")
        assert sql.count("?") == len(params) and len(params) // 3 <= rows_module._MAX_ROWS_PER_INSERT
    sizes = [len(params) // 3 for _, params in statements]
    assert len(sizes) == n // 64 + bin(n % 64).count("1")  # 64-row statements, then one per binary digit


def test_an_episode_of_many_steps_is_stored_in_order(tmp_path: Path, make_document: Any) -> None:
    """150 steps in one flush (three multi-row INSERTs: 64, 64, 16 + 4 + 2): ids follow the steps,
    and the objectives' kept texts keep 0.0 and -0.0 apart."""
    objectives = [(-1.0, 0.0, -0.0, 2.5, NAN)[s % 5] for s in range(150)]
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as store:
        rec = store.recorder(make_document(), results_root=tmp_path / "r", store_steps="all", flush_rows=1000)
        rec.start()
        rec.phase_started(0, "training", "train", {"worker": 1})
        write = rec.step_writer(0, "learner", KEYS[0], KEYS[1])
        for s in range(150):
            write(4, s, s % 7, s % 3, {KEYS[2]: -1.0}, objectives[s], s == 149, s == 149, False, None)
        rec.episode_finished(0, 4, "learner", 150, -150.0, -150.0, 0.5)
        rec.flush()
        assert rec.stored_steps == 150 and rec.buffered == 0 and rec.peak_buffered == 151
        with store.database.engine.connect() as con:
            stored = con.execute(sa.text("SELECT step, sensors, objective FROM step ORDER BY id")).all()
        lines = (rec.results_dir / "all_transactions.csv").read_bytes().decode().split("\r\n")[1:-1]
        rec.finish("finished")
    assert [r[0] for r in stored] == list(range(150))
    assert [r[1] for r in stored] == [_text(KEYS[0], s % 7) for s in range(150)]
    assert [line.split(",")[4] for line in lines] == [str(s) for s in range(150)]
    assert [line.rsplit(",", 2)[1] for line in lines] == [repr(o) for o in objectives]
