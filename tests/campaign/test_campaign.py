"""The Campaign object (issue 23.4): one store query for the state of all its
runs, one hash per document, the store opened per campaign (not per run), one
frozen options object; the lay-down diagram drawn by ``xrun``, not the executor."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from pathlib import Path

import pytest
from scale_components import countdown_run, write_runs

import xdoe.store._json as store_json
from xdoe.campaign import Campaign, CampaignOptions, RunTask, execute_task
from xdoe.errors import InputError
from xdoe.execution import decision_for, load_file_plan, run
from xdoe.store import RunState, Store


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts of Store opens, document hashes and run-state reads (the real
    functions run; they are only counted)."""
    counts: Counter = Counter()

    def spy(owner, name, key):
        real = getattr(owner, name)

        @functools.wraps(real)
        def counting(*args, **kwargs):
            counts[key] += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, counting)

    spy(Store, "__init__", "opens")
    spy(store_json, "canonical_json", "hashes")  # what document_hash hashes, wherever it is called from

    from xdoe.store.runs._runs import Runs

    real_states = Runs._states  # what run_states and claim_run_state read with

    def states(self, conn, versions):
        versions = list(versions)
        counts["state queries"] += 1
        counts["versions asked"] += len(versions)
        return real_states(self, conn, versions)
    monkeypatch.setattr(Runs, "_states", states)
    for name in ("finished_instances", "latest_instance", "instances"):
        spy(Runs, name, name)
    return counts


def _plans(tmp_path: Path, n: int):
    files = write_runs(tmp_path / "runs", [countdown_run(f"camp-{i}", seed=i, episodes=1, length=2)
                                           for i in range(n)])
    return [load_file_plan(f)[0] for f in files]


def test_n_runs_one_campaign_query_one_hash_each_and_no_store_per_run(tmp_path: Path, counted: Counter) -> None:
    n = 4
    plans = _plans(tmp_path, n)
    options = CampaignOptions(store_url=f"sqlite:///{tmp_path / 's.sqlite'}", results=str(tmp_path / "r"),
                              in_process=True)
    results = Campaign(plans, options).run()
    assert [r.status for r in results] == ["finished"] * n
    # one hash per document (the plan carries it to the claim, the decision and the recorder)
    assert counted["hashes"] == n
    # the store: once for the campaign's query, once for the backend; not per run
    assert counted["opens"] == 2
    # one query for the state of all runs, plus each run's own read under its claim (in the claim's transaction)
    assert counted["state queries"] == 1 + n and counted["versions asked"] == 2 * n
    assert counted["finished_instances"] == counted["latest_instance"] == counted["instances"] == 0

    counted.clear()
    again = Campaign([load_file_plan(p.file)[0] for p in plans], options).run()
    assert [r.status for r in again] == ["skipped"] * n
    assert [r.instance_id for r in again] == [r.instance_id for r in results]
    assert all(r.note == f"skipped: finished earlier (instance {r.instance_id})" for r in again)
    assert counted["state queries"] == 1 and counted["hashes"] == n and counted["opens"] == 1


def test_a_run_finished_after_the_campaign_query_is_skipped_under_its_claim(tmp_path: Path) -> None:
    """Another process may finish a run between the campaign's one query and
    the run's claim: the task reads its state again under the claim."""
    [plan] = _plans(tmp_path, 1)
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    options = CampaignOptions(store_url=url, results=str(tmp_path / "r"))
    campaign = Campaign([plan], options)
    assert [d.action for d in campaign.decisions()] == ["new"]
    first = run(plan, store=url, results=tmp_path / "r")  # "another process"
    assert first.status == "finished"
    result = execute_task(RunTask(str(plan.file), options, plan=plan))
    assert result.status == "skipped" and result.instance_id == first.instance_id
    # what xrun prints for it ("run UID <note>"): it was "run UID None"
    assert result.note == f"skipped: finished by another process meanwhile (instance {first.instance_id}; " \
                          "--rerun runs it again)"
    with Store(url) as store:
        assert len(store.runs.instances()) == 1


def test_the_decision_rule_reads_the_state() -> None:
    assert decision_for(RunState()).action == "new"
    assert decision_for(RunState(finished=7)).action == "skip"
    assert decision_for(RunState(finished=7), rerun=True).action == "new"


def test_options_are_one_frozen_object_and_checked(tmp_path: Path) -> None:
    options = CampaignOptions(store_url="sqlite:///rel.sqlite", results="rel", jobs=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.jobs = 3  # type: ignore[misc]
    remote = options.for_workers()
    assert remote.results == str(Path("rel").resolve()) and remote.store_url.endswith(str(Path("rel.sqlite").resolve()))
    assert CampaignOptions(jobs=1).for_workers() == CampaignOptions(jobs=1)
    with pytest.raises(InputError, match="--jobs"):
        CampaignOptions(jobs=0)
    with pytest.raises(InputError, match="--run-timeout"):
        CampaignOptions(run_timeout=0)


def test_the_executor_draws_no_laydown_and_xrun_does(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from click.testing import CliRunner

    from xdoe.cli._xrun import main

    [plan] = _plans(tmp_path, 1)
    direct = run(plan, store=f"sqlite:///{tmp_path / 'a.sqlite'}", results=tmp_path / "a")
    assert direct.status == "finished" and not list(Path(direct.results_dir).glob("laydown.svg"))
    out = CliRunner().invoke(main, ["experiment-start", str(plan.file), "--quiet", "--in-process",
                                    "--store", f"sqlite:///{tmp_path / 'b.sqlite'}", "--results", str(tmp_path / "b")])
    assert out.exit_code == 0, out.output
    [svg] = (tmp_path / "b").glob("camp-0/*/laydown.svg")
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
