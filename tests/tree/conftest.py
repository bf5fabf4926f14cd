"""Makes ``tree_components`` and ``treebuilders`` importable (tests/tree on ``sys.path``)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
