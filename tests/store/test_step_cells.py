"""``RunRecorder.step``'s one-key cells (a step's sensor, action or reward
``{id: value}``, written by ``_json_cell`` without the general encoder for
ints and finite floats) are the text ``json`` writes, in the store and in
``all_transactions.csv`` (the bytes ``csv.writer`` writes)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xdoe.store import Store
from xdoe.store._json import json_default


def _text(key: str, value: Any) -> str:
    return json.dumps({key: value}, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=json_default)


def _recorded(tmp_path: Path, document: dict, name: str, phase: str, agent: str, keys: tuple[str, str, str],
              rows: list[tuple[int, int, Any, Any, Any, float]]) -> tuple[list[tuple], str]:
    store = Store(f"sqlite:///{tmp_path / f'{name}.sqlite'}")
    try:
        rec = store.recorder(document, results_root=tmp_path / name, store_steps="all", flush_rows=7)
        rec.start()
        rec.phase_started(0, phase, "train", {"worker": 1})
        for episode, step, obs, action, reward, objective in rows:
            rec.step(3, episode, step, agent, {keys[0]: obs}, {keys[1]: action}, {keys[2]: reward}, objective, False)
        rec.finish("finished")
        with store.database.engine.connect() as con:
            cells = [tuple(r) for r in con.execute(sa.text("SELECT sensors, actions, rewards FROM step ORDER BY id"))]
        return cells, (rec.results_dir / "all_transactions.csv").read_bytes().decode("utf-8")  # "\r\n" kept
    finally:
        store.close()


def _expected_csv(phase: str, agent: str, keys: tuple[str, str, str], rows: list[tuple]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(("phase", "mode", "worker", "episode", "step", "agent", "sensors", "actions", "rewards",
                     "objective", "done"))
    for episode, step, obs, action, reward, objective in rows:
        writer.writerow((phase, "train", 3, episode, step, agent, _text(keys[0], obs), _text(keys[1], action),
                         _text(keys[2], reward), float(objective), False))
    return buffer.getvalue()


def test_cells_and_csv_lines_are_json_and_csv_text(tmp_path: Path, make_document: Any) -> None:
    """Names with commas, quotes, line breaks and non-ASCII text, and numbers of every kind."""
    agent, phase = 'le,ar"ner\n\u00e9', 'tr"a,in\r'
    keys = ('obs,"x"', "act\n", 'r\u00e9w"')
    rows = [(e, s, obs, action, reward, objective)
            for e, (obs, action, reward, objective) in enumerate([
                (0, 1, -1.0, -1.0), (-5, 10**30, 0.0, float("nan")), (7, 2, -0.0, float("inf")),
                (3, 4, 1e300, 5e-324), (2, 0, 0.1, -2.5e-7), (1, 1, float("nan"), 1.0),
                (True, 2, 1.0, 0.0), (4, np.int64(3), 2.0, 3.0), (9, 9, 1.5, 0.5), (None, "x\u00e9\"", [1, 2], 0.0),
                (np.float32(0.25), 2.5, float("inf"), 1.0)])
            for s in range(2)]
    cells, text = _recorded(tmp_path, make_document(), "w", phase, agent, keys, rows)
    assert cells == [(_text(keys[0], r[2]), _text(keys[1], r[3]), _text(keys[2], r[4])) for r in rows]
    assert text == _expected_csv(phase, agent, keys, rows)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(-2**70, 2**70),
                          st.integers(-10, 10), st.floats(allow_nan=False, allow_infinity=False),
                          st.floats(allow_nan=False)), min_size=1, max_size=20),
       st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8))
def test_cells_match_json_for_any_numbers(tmp_path_factory: Any, make_document: Any, rows: list,
                                          agent: str, sensor: str) -> None:
    tmp = tmp_path_factory.mktemp("rows")
    keys = (sensor, "a", "r")
    cells, text = _recorded(tmp, make_document(), "h", "training", agent, keys, rows)
    assert cells == [(_text(keys[0], r[2]), _text(keys[1], r[3]), _text(keys[2], r[4])) for r in rows]
    assert text == _expected_csv("training", agent, keys, rows)
