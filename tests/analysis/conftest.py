"""Makes ``synthetic`` (the formula environment) importable and runs one
synthetic campaign per module: 8 design points x 3 repetitions through the
real executor into a SQLite store in a temporary folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="package")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``{"dir", "store", "runs"}`` of the synthetic campaign (see synthetic.py)."""
    from synthetic import run_campaign

    return run_campaign(tmp_path_factory.mktemp("synthetic"))
