"""The package builds (issue 36): ``python -m build`` makes an sdist and a
wheel that ``twine check`` accepts, with the license and the data files.

The build runs on a copy of the checkout in ``tmp_path`` (setuptools writes
``*.egg-info`` beside the sources) and without build isolation: the build
backend is the installed setuptools (the test extra pins one that builds
wheels itself), so the test needs no network."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_build_and_twine_check(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="the test extra's build is not installed")
    pytest.importorskip("twine", reason="the test extra's twine is not installed")
    source = tmp_path / "xdoe"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "_outputs", "build", "dist", "site", "*.egg-info", "__pycache__", ".pytest_cache", ".venv"))
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--no-isolation",
                            "--skip-dependency-check", "--outdir", str(dist), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in dist.iterdir())
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "xdoe/py.typed" in names
    assert any(n.startswith("xdoe/dashboard/templates/") for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names), names[-10:]
    metadata = zipfile.ZipFile(wheels[0]).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Description-Content-Type: text/markdown" in metadata
    with tarfile.open(sdists[0]) as sdist:
        assert any(n.endswith("/LICENSE") for n in sdist.getnames())
