"""A real single-node SLURM cluster for tests marked ``slurm``.

Use in a test module::

    from slurm_fixtures import slurm_cluster  # noqa: F401  (pytest fixture)

    @pytest.mark.slurm
    def test_something(slurm_cluster): ...

The fixture, in this order:

1. uses a cluster that already answers (``SLURM_CONF`` set or
   ``/etc/slurm/slurm.conf`` present, and ``sinfo`` reports a usable node);
2. uses the one ``scripts/slurm.sh start`` left running (``$XDOE_SLURM_DIR``,
   default ``/tmp/xdoe-slurm``) and exports its ``SLURM_CONF``;
3. starts one with ``scripts/slurm.sh start`` when running as root and allowed
   (only with ``XDOE_START_SERVERS=1``), and stops it after the session
   unless ``XDOE_KEEP_SERVERS=1``;
4. otherwise skips, saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

import pytest

from xdoe.store.testing import servers_may_start

__all__ = ["SlurmCluster", "run_files", "slurm_cluster"]

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm.sh"


@dataclass(frozen=True)
class SlurmCluster:
    """A SLURM cluster the tests may submit to; ``SLURM_CONF`` is exported while it is in use."""

    conf: Path | None
    started_here: bool


def _answers(env: Mapping[str, str]) -> bool:
    if shutil.which("sinfo") is None:
        return False
    try:
        proc = subprocess.run(
            ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=15, env=dict(env)
        )
    except (OSError, subprocess.SubprocessError):
        return False
    states = proc.stdout.split()
    return proc.returncode == 0 and any(s.rstrip("*") in {"idle", "mixed", "allocated", "completing"} for s in states)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """A usable SLURM cluster (see the module docstring), or a skip with the reason."""
    previous = os.environ.get("SLURM_CONF")
    if (previous or Path("/etc/slurm/slurm.conf").is_file()) and _answers(os.environ):
        yield SlurmCluster(Path(previous) if previous else None, started_here=False)
        return

    conf = Path(os.environ.get("XDOE_SLURM_DIR", "/tmp/xdoe-slurm")) / "slurm.conf"
    started = False
    # `slurm.sh status` checks the recorded daemons first: fast when they are gone
    # (sinfo against a stopped controller retries for about 10 s)
    ours_up = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True, timeout=60).returncode == 0
    if not ours_up:
        if not servers_may_start():
            pytest.skip(
                "no SLURM cluster answers (sinfo); start one with `scripts/slurm.sh start` and "
                '`eval "$(scripts/slurm.sh env)"`, or set XDOE_START_SERVERS=1 to let the tests start it'
            )
        if os.geteuid() != 0:
            pytest.skip("starting the local SLURM cluster (scripts/slurm.sh) needs root")
        proc = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            pytest.fail(f"scripts/slurm.sh start failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        started = "already running" not in proc.stderr
        if not _answers({**os.environ, "SLURM_CONF": str(conf)}):
            pytest.fail(f"scripts/slurm.sh start succeeded but sinfo does not answer with SLURM_CONF={conf}")

    os.environ["SLURM_CONF"] = str(conf)
    try:
        yield SlurmCluster(conf, started_here=started)
    finally:
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
        if started and os.environ.get("XDOE_KEEP_SERVERS") != "1":
            subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, text=True, timeout=300)


def run_files(root: Path, n: int) -> list[Path]:
    """``n`` minimal run files ``run-study-NNNN.yaml`` under ``root`` (created if missing)."""
    root.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(n):
        f = root / f"run-study-{i:04d}.yaml"
        f.write_text(f"uid: study-{i:04d}\n")
        files.append(f)
    return files
