"""Makes ``optuna_truth`` (a known-truth quadratic), ``synthetic`` (its
one-step environment base) and ``prune_components`` (learning curves, which
``hold`` makes killable) importable for the adaptive-design tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "analysis", HERE.parent / "execution"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

pytest.importorskip("optuna", reason="the optuna extra is not installed (pip install 'xdoe[optuna]')")
