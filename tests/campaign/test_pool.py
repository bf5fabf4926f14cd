"""The local process pool (:class:`xdoe.campaign.backends.ProcessPoolBackend`):
when results are handed on, relative to the next runs' start."""

from __future__ import annotations

from pathlib import Path

from scale_components import countdown_run, write_runs

from xdoe.campaign import CampaignOptions, RunTask
from xdoe.campaign.backends import ProcessPoolBackend


def _tasks(tmp_path: Path, docs: list[dict]) -> list[RunTask]:
    options = CampaignOptions(store_url=f"sqlite:///{tmp_path / 'x.sqlite'}", results=str(tmp_path / "results"))
    return [RunTask(f, options) for f in write_runs(tmp_path / "runs", docs)]


def test_a_freed_worker_has_its_next_run_before_the_result_is_handed_on(tmp_path: Path) -> None:
    """A worker is not kept idle while the caller handles the result of its
    last run (``xrun`` draws its ``laydown.svg`` there, issue 26.3): when a
    result is yielded, the next run has been handed to the pool already."""
    tasks = _tasks(tmp_path, [countdown_run(f"h{i}", seed=i) for i in range(3)])
    handed: list[str] = []
    seen = []
    with ProcessPoolBackend(1) as backend:
        for result in backend.map_runs(tasks, started=lambda task: handed.append(task.key)):
            seen.append((result.status, len(handed)))
    assert seen == [("finished", 2), ("finished", 3), ("finished", 3)]


def test_after_a_failed_run_fail_fast_hands_out_no_other(tmp_path: Path) -> None:
    """The next runs are handed out before a result is yielded, but only once
    that result is known not to stop the campaign."""
    broken = countdown_run("broken")
    broken["schedule"][0]["training"]["environments"][0]["environment"]["name"] = "scale_components:NoSuchEnvironment"
    tasks = _tasks(tmp_path, [broken, countdown_run("never", seed=2)])
    handed: list[str] = []
    with ProcessPoolBackend(1) as backend:
        results = list(backend.map_runs(tasks, fail_fast=True, started=lambda task: handed.append(task.key)))
    assert [r.status for r in results] == ["failed"]
    assert handed == [tasks[0].key]
