"""A store that goes away and comes back (issue 33, item 5): a campaign on a
throwaway PostgreSQL server that the test stops once episodes are in the
store. Back within ``--store-wait``: every run finishes, every episode once.
Gone for longer: one ``error:`` line naming the store and the resume
command, exit 1; the resume then finishes the campaign."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.store.campaign import generate_campaign

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "postgres.sh"


def _pg_bin() -> str | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return str(found[-1].parent) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A throwaway PostgreSQL cluster of this test alone (never the shared one)."""

    def __init__(self, folder: Path) -> None:
        self.env = {**os.environ, "XDOE_PG_DIR": str(folder), "XDOE_PG_PORT": str(_free_port())}
        self.url = self._script("url").strip()

    def _script(self, action: str) -> str:
        done = subprocess.run(["bash", str(SCRIPT), action], env=self.env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def start(self) -> None:
        self._script("start")

    def stop(self) -> None:
        self._script("stop")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    if _pg_bin() is None or shutil.which("runuser") is None:
        pytest.skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin) to start a throwaway server")
    if os.geteuid() != 0:
        pytest.skip("the throwaway PostgreSQL server runs as the postgres user: needs root")
    # the server runs as the postgres user, which must reach its folder: not below tmp_path,
    # whose parent every new pytest session (others run in parallel) sets to mode 0700 again
    folder = Path(tempfile.mkdtemp(prefix="xdoe-pg-outage-"))
    folder.chmod(0o755)
    srv = Server(folder)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _episodes(url: str) -> int:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM episode")).scalar_one())
    except Exception:  # noqa: BLE001 - no tables yet
        return 0
    finally:
        engine.dispose()


def _start(files: list[Path], url: str, tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "experiment-start", *map(str, files), "--store", url,
         "--results", str(tmp_path / "results"), "--no-laydown", "-q", *extra],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _when_episodes(proc: subprocess.Popen[str], url: str, count: int) -> None:
    """Return once ``count`` episodes are in the store (the progress signal)."""
    deadline = time.monotonic() + 300
    while _episodes(url) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)


def _check_complete(url: str, runs: int) -> None:
    from xdoe.store import Store

    with Store(url, read_only=True) as store:
        with store.database.engine.connect() as conn:
            from sqlalchemy import text

            finished = conn.execute(text(
                "SELECT count(DISTINCT r.uid) FROM run r JOIN run_instance i ON i.run_id = r.id "
                "WHERE i.status = 'finished'")).scalar_one()
            twice = conn.execute(text(
                "SELECT count(*) FROM (SELECT p.instance_id, p.index, e.worker, e.episode, e.agent "
                "FROM episode e JOIN phase p ON p.id = e.phase_id "
                "GROUP BY p.instance_id, p.index, e.worker, e.episode, e.agent HAVING count(*) > 1) d")).scalar_one()
    assert finished == runs
    assert twice == 0


def test_a_campaign_survives_a_server_restart_of_20_s(server: Server, tmp_path: Path) -> None:
    files = generate_campaign(tmp_path / "study")
    proc = _start(files, server.url, tmp_path, "--jobs", "2", "--store-wait", "90")
    _when_episodes(proc, server.url, 10)
    server.stop()
    time.sleep(20)  # the outage itself (when it starts is a progress signal, above)
    server.start()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "failed" not in err, err
    _check_complete(server.url, len(files))


def test_past_store_wait_one_line_exit_1_and_the_resume_finishes(server: Server, tmp_path: Path) -> None:
    files = generate_campaign(tmp_path / "study")
    proc = _start(files, server.url, tmp_path, "--jobs", "2", "--store-wait", "3")
    _when_episodes(proc, server.url, 10)
    server.stop()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "127.0.0.1" in lines[0]
    assert "resume with: xrun experiment-start" in lines[0]
    server.start()
    again = _start(files, server.url, tmp_path, "--jobs", "2")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    _check_complete(server.url, len(files))


def test_each_run_path_write_survives_a_restart_inside_its_transaction(server: Server, tmp_path: Path) -> None:
    """The server restarts *inside* each write of the run path (a run recorded,
    a checkpoint, brain sources, the rows a resume redoes): the transaction
    fails on its dead connection and is run again once the store is back, not
    failed (CI saw ``cannot record a checkpoint``: the write that had no second
    attempt). The restart is triggered by the write's own first statement."""
    from sqlalchemy import event

    from tests.store.campaign import craft, document_of
    from xdoe.store import SourceRow, Store

    files = generate_campaign(tmp_path / "study")
    with Store(server.url, wait=60) as store:
        rec = craft(store, document_of(files[0]), tmp_path / "results", None)
        instance = rec.instance_id
        writes = {
            "checkpoint": lambda: store.checkpoints.record_checkpoint(
                instance, agent="a", phase_id=None, step=1, episode=1, path=tmp_path / "a.pt",
                sha256="0" * 64, metric=None, keep=2),
            "brain_source": lambda: store.checkpoints.record_brain_sources(instance, None, [SourceRow("a", "fresh")]),
            "phase": lambda: store.runs.drop_redone([10**9]),
            "run_instance": lambda: craft(store, document_of(files[1]), tmp_path / "results", "finished"),
        }
        for table, write in writes.items():
            armed = [True]

            def restart(conn: object, cursor: object, statement: str, *args: object) -> None:
                if armed[0] and table in statement and not statement.lstrip().upper().startswith("SELECT"):
                    armed[0] = False
                    server.stop()
                    server.start()

            event.listen(store.database.writer, "before_cursor_execute", restart)
            try:
                write()
            finally:
                event.remove(store.database.writer, "before_cursor_execute", restart)
            assert not armed[0], f"no statement on {table}"
        assert len(store.checkpoints.of_instance(instance)) == 1
        assert store.runs.run_state(rec.run_uid, rec.content_hash) is not None
