"""Makes ``dashboard_helpers`` importable; the dashboard's extra must be installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

for _module in ("fastapi", "uvicorn", "jinja2", "plotly", "httpx"):
    pytest.importorskip(_module, reason=f"the dashboard extra is not installed ({_module})")
