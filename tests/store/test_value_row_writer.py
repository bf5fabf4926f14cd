"""``RunRecorder.value_row_writer`` records exactly the rows ``step`` records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xdoe.errors import StoreError
from xdoe.store import Store

VALUES: list[Any] = [3, -7, True, np.int64(4), 2.5, -0.0, float("nan"), float("inf"), np.float32(0.25),
                     None, "x\u00e9\"", [1, 2]]


def _recorded(store: Store, document: dict, root: Path, lean: bool) -> tuple[list[tuple], str]:
    rec = store.recorder(document, results_root=root, store_steps="all")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    keys = ("taxi.observation", 'we"ird\u00e9', "taxi.reward")
    write = rec.value_row_writer(1, "learner", *keys)
    for i, value in enumerate(VALUES):
        for episode, (obs, action, reward) in enumerate(((value, 2, -1.0), (5, value, 0.5), (6, 1, value))):
            if lean:
                write(episode, i, obs, action, reward, -1.5 + i)
            else:
                rec.step(1, episode, i, "learner", {keys[0]: obs}, {keys[1]: action}, {keys[2]: reward},
                         -1.5 + i, False)
    rec.phase_finished()
    rec.finish("finished")
    with store.engine.connect() as con:
        rows = [tuple(r) for r in con.execute(sa.text(
            "SELECT worker, episode, step, agent, sensors, actions, rewards, objective, done FROM step "
            "ORDER BY id"))]
    return rows, (rec.results_dir / "all_transactions.csv").read_text(encoding="utf-8")


def test_value_row_writer_rows_equal_step_rows(tmp_path: Path, make_document: Any) -> None:
    out = {}
    for lean in (True, False):
        store = Store(f"sqlite:///{tmp_path / f'{lean}.sqlite'}")
        try:
            out[lean] = _recorded(store, make_document(), tmp_path / f"results-{lean}", lean)
        finally:
            store.close()
    assert len(out[True][0]) == 3 * len(VALUES)
    assert repr(out[True][0]) == repr(out[False][0])  # repr: NaN cells compare as text
    assert out[True][1] == out[False][1]


def test_value_row_writer_needs_an_open_phase(store: Store, make_document: Any, tmp_path: Path) -> None:
    rec = store.recorder(make_document(), results_root=tmp_path, store_steps="all")
    rec.start()
    rec.phase_started(0, "training", "train", {"worker": 1})
    write = rec.value_row_writer(0, "learner", "s", "a", "r")
    rec.phase_finished()
    with pytest.raises(StoreError, match="no phase is open"):
        write(0, 0, 1, 1, 0.0, 0.0)
    rec.finish("finished")
    with pytest.raises(StoreError, match="after finish"):
        write(0, 0, 1, 1, 0.0, 0.0)


def _csv_of(tmp_path: Path, document: dict, name: str, phase: str, agent: str, keys: tuple[str, str, str],
            rows: list[tuple[int, int, Any, Any, Any, float]], lean: bool) -> str:
    store = Store(f"sqlite:///{tmp_path / f'{name}-{lean}.sqlite'}")
    try:
        rec = store.recorder(document, results_root=tmp_path / f"{name}-{lean}", store_steps="all", flush_rows=7)
        rec.start()
        rec.phase_started(0, phase, "train", {"worker": 1})
        write = rec.value_row_writer(3, agent, *keys)
        for episode, step, obs, action, reward, objective in rows:
            if lean:
                write(episode, step, obs, action, reward, objective)
            else:
                rec.step(3, episode, step, agent, {keys[0]: obs}, {keys[1]: action}, {keys[2]: reward},
                         objective, False)
        rec.finish("finished")
        return (rec.results_dir / "all_transactions.csv").read_bytes().decode("utf-8")  # "\r\n" kept
    finally:
        store.close()


def test_joined_csv_lines_are_what_csv_writes(tmp_path: Path, make_document: Any) -> None:
    """The value-step rows' all_transactions.csv lines: names with commas,
    quotes, line breaks and non-ASCII text, and numbers of every kind, give
    the bytes csv.writer writes."""
    import csv
    import io

    agent, phase = 'le,ar"ner\n\u00e9', 'tr"a,in\r'
    keys = ('obs,"x"', "act\n", 'r\u00e9w"')
    rows = [(e, s, obs, action, reward, objective)
            for e, (obs, action, reward, objective) in enumerate([
                (0, 1, -1.0, -1.0), (-5, 10**30, 0.0, float("nan")), (7, 2, -0.0, float("inf")),
                (3, 4, 1e300, 5e-324), (2, 0, 0.1, -2.5e-7), (1, 1, float("nan"), 1.0),  # not joined: NaN reward
                (True, 2, 1.0, 0.0), (4, np.int64(3), 2.0, 3.0), (9, 9, 1.5, 0.5)])
            for s in range(2)]
    lean = _csv_of(tmp_path, make_document(), "w", phase, agent, keys, rows, True)
    general = _csv_of(tmp_path, make_document(), "w", phase, agent, keys, rows, False)
    assert lean == general
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(("phase", "mode", "worker", "episode", "step", "agent", "sensors", "actions", "rewards",
                     "objective", "done"))
    from xdoe.store._recorder_rows import _one_key_cell
    for episode, step, obs, action, reward, objective in rows:
        writer.writerow((phase, "train", 3, episode, step, agent, _one_key_cell(keys[0], obs),
                         _one_key_cell(keys[1], action), _one_key_cell(keys[2], reward), float(objective), False))
    assert lean == buffer.getvalue()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(-2**70, 2**70),
                          st.integers(-10, 10), st.floats(allow_nan=False, allow_infinity=False),
                          st.floats()), min_size=1, max_size=20),
       st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8))
def test_joined_csv_lines_match_csv_for_any_numbers(tmp_path_factory: Any, make_document: Any, rows: list,
                                                     agent: str, sensor: str) -> None:
    tmp = tmp_path_factory.mktemp("rows")
    keys = (sensor, "a", "r")
    lean = _csv_of(tmp, make_document(), "h", "training", agent, keys, rows, True)
    assert lean == _csv_of(tmp, make_document(), "h", "training", agent, keys, rows, False)
