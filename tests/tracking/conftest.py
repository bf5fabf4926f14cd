"""Makes the executor tests' components (tests/execution/*_components.py,
``held_environments``) importable here and in the processes the tests start."""

from __future__ import annotations

import sys
from pathlib import Path

COMPONENTS = Path(__file__).resolve().parents[1] / "execution"
if str(COMPONENTS) not in sys.path:
    sys.path.insert(0, str(COMPONENTS))
