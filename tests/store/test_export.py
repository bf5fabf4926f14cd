"""xrun export: one long table from the store, CSV and Parquet, which
instances are exported, errors."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
from sqlalchemy import update

from campaign import EXPERIMENT, FACTORS, craft, document_of, execute, generate_campaign
from xdoe.errors import InputError
from xdoe.store import EXPORT_COLUMNS, RunInstance

COLUMNS = ["experiment", "run", "design_point", "repetition", "seed", *FACTORS, "phase", "mode",
           "worker", "episode", "agent", "steps", "reward", "objective", "wall_time", "terminated",
           "truncated", "cut_by"]


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


@pytest.fixture
def campaign(tmp_path, store):
    files = generate_campaign(tmp_path / "out")
    for path in files[:3]:
        execute(path, store, tmp_path / "results")
    return files


def test_csv_columns_rows_and_design_values(tmp_path, store, campaign):
    result = store.views.export_episodes(tmp_path / "table.csv", EXPERIMENT)
    columns, rows = read_csv(tmp_path / "table.csv")
    assert columns == COLUMNS == list(result.columns)
    assert list(EXPORT_COLUMNS) == [c for c in COLUMNS if c not in FACTORS]
    # 3 runs x (3 train + 2 test episodes) x 1 worker x 1 agent
    assert result.rows == len(rows) == 15 and result.runs == 3
    # design columns are exactly design.csv's cells for that run
    _, design = read_csv(tmp_path / "out" / "design.csv")
    by_uid = {d["run_uid"]: d for d in design}
    for row in rows:
        d = by_uid[row["run"]]
        assert row["experiment"] == EXPERIMENT
        for key in ("design_point", "repetition", "seed", *FACTORS):
            assert row[key] == d[key], key
    # episode columns are the store's episode rows, in recording order
    stored = [e for e in store.runs.episodes(experiment=EXPERIMENT)]
    assert [(r["run"], r["phase"], r["mode"], int(r["worker"]), int(r["episode"]), r["agent"],
             int(r["steps"]), float(r["reward"]), float(r["objective"]), float(r["wall_time"]))
            for r in rows] == [
        (e["run"], e["phase"], e["mode"], e["worker"], e["episode"], e["agent"], e["steps"],
         e["reward"], e["objective"], e["wall_time"]) for e in stored]
    assert [r["phase"] for r in rows[:5]] == ["training"] * 3 + ["testing"] * 2
    # how each episode ended is a column: exactly one of terminated/truncated, a cause for a cut
    assert {(r["terminated"], r["truncated"]) for r in rows} <= {("true", "false"), ("false", "true")}
    assert all((r["cut_by"] == "") == (r["terminated"] == "true") for r in rows)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".table")]  # no temp file left


def test_parquet_round_trip_matches_csv(tmp_path, store, campaign):
    pq = pytest.importorskip("pyarrow.parquet")
    store.views.export_episodes(tmp_path / "t.csv", EXPERIMENT)
    result = store.views.export_episodes(tmp_path / "t.parquet", EXPERIMENT, batch_rows=4)
    table = pq.read_table(tmp_path / "t.parquet")
    assert table.column_names == COLUMNS and table.num_rows == result.rows == 15
    types = {f.name: str(f.type) for f in table.schema}
    assert types["length"] == "int64" and types["0.environments"] == "string"
    assert types["seed"] == "int64" and types["reward"] == "double" and types["episode"] == "int64"
    _, rows = read_csv(tmp_path / "t.csv")
    for got, want in zip(table.to_pylist(), rows):
        assert {k: "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in got.items()} == {
            k: v for k, v in want.items()}


def test_latest_finished_instance_per_run_and_all_instances(tmp_path, store):
    files = generate_campaign(tmp_path / "out")
    doc = document_of(files[0])
    results = tmp_path / "results"
    first = craft(store, doc, results, "finished", reward=10.0)
    craft(store, doc, results, "failed", reward=20.0, error="boom")  # newer but failed
    rows = read_csv(store.views.export_episodes(tmp_path / "a.csv").path)[1]
    assert {float(r["reward"]) for r in rows} == {10.0, 11.0}
    third = craft(store, doc, results, "finished", reward=30.0)
    rows = read_csv(store.views.export_episodes(tmp_path / "b.csv").path)[1]
    assert {float(r["reward"]) for r in rows} == {30.0, 31.0}
    columns, rows = read_csv(store.views.export_episodes(tmp_path / "c.csv", all_instances=True).path)
    assert columns[:3] == ["experiment", "run", "instance"]
    assert len(rows) == 6
    assert {r["instance"] for r in rows} >= {str(first.instance_id), str(third.instance_id)}


def test_resumed_instance_takes_earlier_phases_from_the_interrupted_one(tmp_path, store):
    files = generate_campaign(tmp_path / "out")
    doc = document_of(files[0])
    results = tmp_path / "results"
    a = store.recorder(doc, results_root=results)
    a.start()
    a.phase_started(0, "training", "train", {})
    a.episode_finished(0, 0, "random", 5, 1.0, 1.0, 0.1)
    a.phase_finished()
    a.phase_started(1, "testing", "test", {})
    a.episode_finished(0, 0, "random", 5, 99.0, 99.0, 0.1)  # lost with the interruption
    a.finish("interrupted")
    b = store.recorder(doc, results_root=results)  # resumes: only the testing phase
    b.start()
    b.phase_started(1, "testing", "test", {})
    b.episode_finished(0, 0, "random", 5, 2.0, 2.0, 0.1)
    b.phase_finished()
    b.finish("finished")
    rows = read_csv(store.views.export_episodes(tmp_path / "r.csv").path)[1]
    assert [(r["phase"], float(r["reward"])) for r in rows] == [("training", 1.0), ("testing", 2.0)]


def test_running_instance_is_exported_when_nothing_finished(tmp_path, store):
    files = generate_campaign(tmp_path / "out")
    craft(store, document_of(files[1]), tmp_path / "results", None, episodes=3)
    result = store.views.export_episodes(tmp_path / "x.csv", EXPERIMENT)
    assert result.rows == 3


def test_errors(tmp_path, store, monkeypatch):
    with pytest.raises(InputError, match="unknown table format"):
        store.views.export_episodes(tmp_path / "t.xlsx")
    with pytest.raises(InputError, match="no experiment 'nope'"):
        store.views.export_episodes(tmp_path / "t.csv", "nope")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if pyarrow were not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(InputError, match="pyarrow"):
        store.views.export_episodes(tmp_path / "t.parquet")
    assert not list(tmp_path.glob("t.*")) and not list(tmp_path.glob(".t.*"))


def test_empty_store_writes_a_header(tmp_path, store):
    result = store.views.export_episodes(tmp_path / "e.csv")
    assert result.rows == 0
    assert read_csv(tmp_path / "e.csv")[0] == list(EXPORT_COLUMNS)


def test_factor_name_clash_and_mixed_levels(tmp_path, store):
    base = {"experiment_uid": "clash", "schedule": []}
    for k, level in enumerate([1, 2.5, "x"]):
        doc = {**base, "uid": f"clash-{k}", "seed": k,
               "design_point": {"index": k, "repetition": 0, "levels": {"seed": level, "n": k}}}
        craft(store, doc, tmp_path / "results", "finished", episodes=1)
    columns, rows = read_csv(store.views.export_episodes(tmp_path / "c.csv", "clash").path)
    assert columns[5:7] == ["n", "factor:seed"]
    assert [r["factor:seed"] for r in rows] == ["1", "2.5", "x"]
    pq = pytest.importorskip("pyarrow.parquet")
    store.views.export_episodes(tmp_path / "c.parquet", "clash")
    table = pq.read_table(tmp_path / "c.parquet")
    assert table.column("factor:seed").to_pylist() == ["1", "2.5", "x"]
    assert str(table.schema.field("n").type) == "int64"
    # a stale status does not matter to export: the instance is what it is
    with store.database.session(write=True) as s, s.begin():
        s.execute(update(RunInstance).values(status="running"))
    assert store.views.export_episodes(tmp_path / "d.csv", "clash").rows == 3
