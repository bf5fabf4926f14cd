"""Makes ``components`` (test components for run documents) importable and
provides a fresh SQLite store (builders: runbuilders.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def store(tmp_path: Path):
    from xdoe.store import Store

    with Store(f"sqlite:///{tmp_path / 'xrun.sqlite'}") as s:
        yield s
