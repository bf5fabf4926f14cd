"""The executor runs one plan: it imports neither the campaign (many runs),
the training session nor the analysis (matplotlib), at run time or for type
checkers (issue 23.4: no package-level cycle campaign <-> execution <-> session)."""

from __future__ import annotations

import ast
from pathlib import Path

EXECUTION = Path(__file__).resolve().parents[2] / "src" / "xdoe" / "execution"
ABOVE = ("xdoe.campaign", "xdoe.session", "xdoe._session", "xdoe.analysis", "xdoe.cli", "xdoe.tree")


def test_execution_imports_nothing_above_it() -> None:
    offenders = []
    for path in sorted(EXECUTION.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.name}:{node.lineno}: {m}" for m in names if m.startswith(ABOVE)]
    assert len(list(EXECUTION.glob("*.py"))) > 10  # the package is read at all
    assert offenders == []


def test_execution_reexports_no_campaign_or_session_name() -> None:
    import xdoe.execution

    assert not {"RunTask", "execute_task", "Backend", "make_backend", "TrainingSession"} & set(xdoe.execution.__all__)
