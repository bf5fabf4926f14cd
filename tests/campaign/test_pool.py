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


GATED_PRELOAD = '''
import os, pathlib, time
gate = pathlib.Path(os.environ["XDOE_TEST_GATE"])
deadline = time.monotonic() + 60  # a parent that never opens it (the test failing) leaves no process behind
while not gate.exists() and time.monotonic() < deadline:  # the preload ends once the parent opened the gate
    time.sleep(0.01)
'''

START = '''
import os, pathlib, sys
from xdoe.campaign import start_forkserver
from xdoe.campaign.backends import ProcessPoolBackend
assert start_forkserver(["gated_preload"])
backend = ProcessPoolBackend(2)
backend.start()  # returns while the forkserver still loads its modules: else nothing opens the gate
pathlib.Path(os.environ["XDOE_TEST_GATE"]).write_text("open")
pids = {backend.submit(os.getpid).result() for _ in range(4)}
backend.close()
print("ok", len(pids) >= 1 and os.getpid() not in pids)
'''


def test_starting_the_workers_does_not_wait_for_the_forkserver(tmp_path: Path) -> None:
    """``xrun --jobs N`` starts the workers and reads the campaign meanwhile
    (issue 35.3): ``start`` returns before the forkserver has loaded its
    modules (a fork waits for that). Here the forkserver's preload waits for
    a file that the parent writes only after ``start`` returned: a ``start``
    that waited would never return (the subprocess's timeout)."""
    import os
    import subprocess
    import sys

    (tmp_path / "gated_preload.py").write_text(GATED_PRELOAD)
    env = {**os.environ, "XDOE_TEST_GATE": str(tmp_path / "gate"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok", "True"]


FORK_PROBE = '''
import os, sys
AT_FORK = set()


def _remember():
    AT_FORK.clear()
    AT_FORK.update(sys.modules)


os.register_at_fork(after_in_child=_remember)


def imported_since_fork():
    return sorted(m for m in sys.modules if m not in AT_FORK)
'''

WARM_RUN = '''
import sys
from pathlib import Path
from scale_components import countdown_run, write_runs
import fork_probe
from xdoe.campaign import CampaignOptions, RunTask, start_forkserver
from xdoe.campaign.backends import ProcessPoolBackend
from xdoe.campaign.backends._warm import WARM_MODULES
from xdoe.execution import load_file_plan, preflight

tmp = Path(sys.argv[1])
assert start_forkserver([*WARM_MODULES, "fork_probe"])
options = CampaignOptions(store_url=f"sqlite:///{tmp / 'x.sqlite'}", results=str(tmp / "results"))
files = write_runs(tmp / "runs", [countdown_run("warm", seed=1)])
with ProcessPoolBackend(1) as backend:
    backend.start()
    plans = [load_file_plan(f)[0] for f in files]
    assert preflight(plans, store_url=options.store_url, results=options.results, workers=backend) == []
    assert [r.status for r in backend.map_runs([RunTask(f, options, plan=p) for f, p in zip(files, plans)])] \\
        == ["finished"]
    print(" ".join(backend.submit(fork_probe.imported_since_fork).result()))
'''


def test_a_worker_imports_none_of_xdoe_after_its_fork(tmp_path: Path) -> None:
    """The forkserver preloads what every worker of ``--jobs N`` imports
    (issue 35.3): the pool's own worker loop, the component check and the
    modules every run imports, so that N workers do not each import them
    after their fork, before their first run. A worker that checked the
    components and ran a run has imported no module of xdoe's since its
    fork (the run's components, user code, and the store's database driver
    are imported where they are used)."""
    import os
    import subprocess
    import sys

    (tmp_path / "fork_probe.py").write_text(FORK_PROBE)
    components = Path(__file__).resolve().parents[1] / "execution"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), str(components),
                                                                      os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", WARM_RUN, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    imported = proc.stdout.split()
    assert [m for m in imported if m.startswith("xdoe.") or m == "concurrent.futures.process"] == [], imported
