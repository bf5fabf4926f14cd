"""xrun status / export / tree on a real campaign (xgen's dummy study run
by the executor): output, exit codes, options."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))

from campaign import EXPERIMENT, FACTORS, craft, document_of, execute, generate_campaign  # noqa: E402
from xdoe.cli._xrun import main  # noqa: E402
from xdoe.store import Store  # noqa: E402


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    monkeypatch.setenv("XRUN_STORE", url)
    monkeypatch.setenv("COLUMNS", "200")
    files = generate_campaign(tmp_path / "out")
    with Store(url) as store:
        execute(files[0], store, tmp_path / "results")
        craft(store, document_of(files[1]), tmp_path / "results", "failed", error="ValueError: boom")
    return tmp_path, files


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_help_texts():
    for command in ("status", "export", "tree"):
        result = invoke(command, "--help")
        assert result.exit_code == 0 and "--store" in result.output and "--experiment" in result.output


def test_status_of_an_output_folder(campaign):
    tmp_path, files = campaign
    result = invoke("status", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert "16 runs: 1 finished, 1 failed, 14 missing" in result.output
    assert "ValueError: boom" in result.output and "dummy-study-0015" in result.output
    only = invoke("status", str(tmp_path / "out"), "--only", "failed")
    assert "dummy-study-0001" in only.output and "dummy-study-0000" not in only.output
    quiet = invoke("status", "-q", "--experiment", EXPERIMENT)
    assert quiet.output.strip() == "2 runs: 1 finished, 1 failed"


def test_status_exit_0_when_all_finished_and_2_for_bad_input(campaign):
    tmp_path, files = campaign
    with Store() as store:
        execute(files[1], store, tmp_path / "results")
    assert invoke("status", "--experiment", EXPERIMENT).exit_code == 0
    assert invoke("status", str(tmp_path / "nowhere")).exit_code == 2
    bad = invoke("status", "--experiment", "nope")
    assert bad.exit_code == 2 and "no experiment 'nope'" in bad.output


def test_export_csv_and_parquet(campaign):
    tmp_path, _ = campaign
    result = invoke("export", "-e", EXPERIMENT, "-o", "table.csv")
    assert result.exit_code == 0, result.output
    assert "wrote 7 rows of 2 runs" in result.output  # 3 + 2 executed, 2 crafted
    with open(tmp_path / "table.csv", newline="") as fh:
        header = next(csv.reader(fh))
    assert header[5:8] == FACTORS
    pytest.importorskip("pyarrow")
    assert invoke("export", "-o", "t.parquet", "--all-instances").exit_code == 0
    assert (tmp_path / "t.parquet").is_file()
    bad = invoke("export", "-o", "t.json")
    assert bad.exit_code == 2 and "unknown table format" in bad.output


def test_tree(campaign):
    tmp_path, _ = campaign
    result = invoke("tree", "-e", EXPERIMENT)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("experiment dummy-study")
    assert "run dummy-study-0000" in result.output and "✓ finished" in result.output
    assert "✗ failed" in result.output and "ValueError: boom" in result.output
    latest = invoke("tree", "--run", "dummy-study-0001", "--latest")
    assert "dummy-study-0000" not in latest.output and "dummy-study-0001" in latest.output
    assert invoke("tree", "-e", "nope").exit_code == 2


@pytest.mark.parametrize("command", [["status"], ["export", "-o", "x.csv"], ["tree"]])
def test_read_only_commands_never_create_a_store(tmp_path, monkeypatch, command):
    """Defect: `xrun status` in an empty folder created _outputs/xrun.sqlite."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XRUN_STORE", raising=False)
    result = invoke(*command)
    assert result.exit_code == 2, result.output
    assert ("no store at sqlite:///_outputs/xrun.sqlite — run `xrun experiment-start` first or pass --store"
            in result.output)
    assert list(tmp_path.iterdir()) == []
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    result = invoke(*command, "--store", f"sqlite:///{empty}")
    assert result.exit_code == 2 and "(no xdoe tables)" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]


def test_export_with_nothing_to_export_exits_1(tmp_path, monkeypatch):
    """Defect: `xrun export` with nothing to export exited 0."""
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    Store(url).close()
    result = invoke("export", "-o", "x.csv", "--store", url)
    assert result.exit_code == 1 and "nothing to export" in result.output
    assert not (tmp_path / "x.csv").exists()


def test_status_of_many_runs_draws_the_table_rich_draws(campaign, monkeypatch):
    """Above PLAIN_ROWS runs the status table is written line by line (issue
    26: rich lays out about 1,000 rows a second); it is the table rich draws."""
    import xdoe.cli._inspect as inspect_module

    tmp_path, _ = campaign
    with_rich = invoke("status", str(tmp_path / "out"))
    monkeypatch.setattr(inspect_module, "PLAIN_ROWS", 0)
    plain = invoke("status", str(tmp_path / "out"))
    assert plain.exit_code == with_rich.exit_code == 1
    assert plain.output == with_rich.output
    monkeypatch.setenv("COLUMNS", "95")  # the reason cut with an ellipsis
    plain = invoke("status", str(tmp_path / "out"))
    monkeypatch.setattr(inspect_module, "PLAIN_ROWS", 500)
    assert "…" in plain.output and plain.output == invoke("status", str(tmp_path / "out")).output
    monkeypatch.setattr(inspect_module, "PLAIN_ROWS", 0)
    monkeypatch.setenv("COLUMNS", "90")  # too narrow for the table: rich draws it
    narrow_plain = invoke("status", str(tmp_path / "out"))
    monkeypatch.setattr(inspect_module, "PLAIN_ROWS", 500)
    assert narrow_plain.output == invoke("status", str(tmp_path / "out")).output


def test_status_of_one_run_reads_only_that_run(campaign, monkeypatch):
    """Issue 26: `xrun status RUN` answers from the run's own rows (one
    indexed query), never every run of the store; the answer is the one the
    campaign's table gives, with the traceback."""
    from xdoe.store.runs._runs import Runs

    tmp_path, files = campaign
    whole = invoke("status", "--experiment", EXPERIMENT, "--format", "json")
    monkeypatch.setattr(Runs, "versions", lambda *a, **k: pytest.fail("read every run"))
    import xdoe.store.views._status as status_module

    real = status_module.version_rows
    asked = []

    def only_one(store, experiment=None, *, run=None, latest_only=False):
        asked.append(run)
        return real(store, experiment, run=run, latest_only=latest_only)

    monkeypatch.setattr(status_module, "version_rows", only_one)
    one = invoke("status", "dummy-study-0001")
    assert one.exit_code == 1 and asked == ["dummy-study-0001"]
    assert "status: failed" in one.output and "reason: ValueError: boom" in one.output
    import json

    mine = json.loads(invoke("status", "--run", "dummy-study-0001", "--format", "json").output)["runs"]
    assert mine == [r for r in json.loads(whole.output)["runs"] if r["run"] == "dummy-study-0001"]
    assert invoke("status", "--run", "nope").exit_code == 2


def test_status_json_is_every_field_of_every_run(campaign):
    """``--format json`` writes each run's fields one level deep (no
    ``dataclasses.asdict`` deep copy: 0.6 s of 10,000 runs), the same text
    as encoding ``asdict``: times in ISO 8601, warnings a list, None null."""
    import dataclasses
    import datetime as _dt
    import json

    from xdoe.cli._inspect import _status_json

    tmp_path, files = campaign
    with Store(f"sqlite:///{tmp_path / 'cli.sqlite'}") as store:
        status = store.views.campaign_status(tmp_path / "out")
    warned = dataclasses.replace(status.runs[0], warnings=("one", "two [b]x[/b] :smile:"),
                                 end=_dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=_dt.timezone.utc))
    status.runs[0] = warned
    expected = [{k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in dataclasses.asdict(r).items()}
                for r in status.runs]
    text = _status_json(status, (), EXPERIMENT)
    assert text == json.dumps({"experiment": EXPERIMENT, "runs": expected, "counts": status.counts,
                               "all_finished": status.all_finished}, indent=2)
    assert json.loads(text)["runs"][0]["warnings"] == ["one", "two [b]x[/b] :smile:"]
    only = json.loads(_status_json(status, ("failed",), EXPERIMENT))["runs"]
    assert [r["status"] for r in only] == ["failed"]
