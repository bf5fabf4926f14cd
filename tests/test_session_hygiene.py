"""A test session writes only below ``tmp_path``, starts servers only when
asked and stops what it started (issue 9).

The tests run child pytest sessions: on :func:`test_child_session` (which
asks for the PostgreSQL fixture), comparing the server processes (``ps``:
PostgreSQL postmasters, SLURM daemons) before and after; and on tests that
run documents, from an empty working directory that must stay empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from xdoe.store.testing import START_SERVERS_VAR

CHILD_VAR = "XDOE_TEST_CHILD_SESSION"
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(os.environ.get(CHILD_VAR) != "1", reason="runs only inside test_servers' child session")
def test_child_session(postgres_admin: str) -> None:
    assert postgres_admin.startswith("postgresql")


def _servers() -> set[tuple[int, str]]:
    """PostgreSQL postmasters (``postgres -D ...``) and SLURM daemons now running."""
    found = set()
    for proc in psutil.process_iter(["pid", "name", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if (proc.info["name"] == "postgres" and " -D " in cmd) or proc.info["name"] in ("slurmctld", "slurmd"):
            found.add((proc.info["pid"], cmd))
    return found


def _child(tmp_path: Path, *tests: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in (START_SERVERS_VAR, "XDOE_TEST_POSTGRES_URL", "XDOE_KEEP_SERVERS")}
    environ.update({CHILD_VAR: "1", **env})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", f"--rootdir={ROOT}",
         f"--basetemp={tmp_path / 'child'}", *(tests or [f"{Path(__file__)}::test_child_session"])],
        cwd=cwd, env=environ, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_tests_that_run_documents_write_only_below_tmp_path(tmp_path: Path) -> None:
    """Defect: tests passed ``results=None`` and filled the user's ``_outputs/results/``."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = _child(tmp_path, str(ROOT / "tests" / "execution" / "test_parallel_workers.py"), "-k",
                  "dying or same_episodes", cwd=cwd)
    assert "2 passed" in done.stdout, done.stdout + done.stderr
    # (pytest-benchmark, when installed, creates its empty .benchmarks folder in the working directory)
    assert [str(p.relative_to(cwd)) for p in cwd.rglob("*") if p.name != ".benchmarks"] == []


@pytest.mark.slow
def test_no_server_starts_unless_asked(tmp_path: Path) -> None:
    before = _servers()
    done = _child(tmp_path)
    assert "1 skipped" in done.stdout, done.stdout + done.stderr
    assert f"${START_SERVERS_VAR} is not 1" in done.stdout
    assert _servers() <= before  # nothing new left behind


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.skipif(os.environ.get(START_SERVERS_VAR) != "1" or os.geteuid() != 0,
                    reason=f"starts a PostgreSQL server: needs ${START_SERVERS_VAR}=1 and root")
def test_a_session_stops_the_server_it_started(tmp_path: Path) -> None:
    before = _servers()
    done = _child(tmp_path, **{START_SERVERS_VAR: "1"})
    assert "1 passed" in done.stdout, done.stdout + done.stderr
    # a server that ran before is still running; one the session started is gone
    assert _servers() == before
