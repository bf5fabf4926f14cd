"""Shared fixtures: ``store_url``, one fresh store per test on every backend.

``store_url`` is parametrised over SQLite (a file in ``tmp_path``) and
PostgreSQL (marked ``postgres``). The PostgreSQL server is
``$XDOE_TEST_POSTGRES_URL`` when set, else the throwaway server that
``scripts/postgres.sh start`` runs (started once per session only when
``XDOE_START_SERVERS=1``, we are root and the binaries exist, and stopped at
the end of the session); otherwise those tests are skipped with the reason.
Every PostgreSQL test gets its own schema, dropped afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from xdoe.store.testing import postgres_server, temporary_schema

# no example database and no .hypothesis/ in the working tree: hypothesis keeps its
# files in a temporary folder removed at the end of the session (pytest_unconfigure)
settings.register_profile("xdoe", database=None)
settings.load_profile("xdoe")
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="xdoe-hypothesis-")
set_hypothesis_home_dir(_HYPOTHESIS_HOME)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[str]:
    """Admin URL of the test PostgreSQL server (skips when there is none);
    a server this session started is stopped when the session ends."""
    with postgres_server() as (url, reason):
        if url is None:
            pytest.skip(f"no PostgreSQL server: {reason}")
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh, empty store on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'xrun.sqlite'}"
    else:
        admin = request.getfixturevalue("postgres_admin")
        with temporary_schema(admin) as url:
            yield url


def _default_outputs() -> set[str]:
    """Every path below the working directory's default output folder."""
    root = Path("_outputs")
    return {str(p) for p in root.rglob("*")} if root.exists() else set()


@pytest.fixture(scope="session", autouse=True)
def no_writes_to_default_outputs() -> Iterator[None]:
    """Tests write only below ``tmp_path``: fail the session if any of them
    added a file to the working directory's ``_outputs/`` (the default store
    and results folder, where a user's real results live)."""
    before = _default_outputs()
    yield
    added = sorted(_default_outputs() - before)
    assert not added, f"tests wrote into the default output folder: {added[:5]}"
