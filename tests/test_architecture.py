"""The package layout rules (issue 11): no import cycles, every module
importable on its own, SQL only in ``xdoe.store``, no module over
:data:`MAX_MODULE_LINES` lines."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
#: The ceiling on a module's length (the target is ~400 lines; split a module
#: into cohesive private modules before it reaches this).
MAX_MODULE_LINES = 450


def _graph_module():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_the_import_graph_has_no_cycle() -> None:
    graph = _graph_module()
    edges = graph.import_graph(SRC)
    assert "xdoe.execution._plan" in edges["xdoe.execution._api"]  # the graph is read at all
    assert "xdoe.store._models" in edges["xdoe.store._rules"]       # through a package __init__ too
    assert graph.cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "xdoe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from xdoe.b import g\n")
    (pkg / "b.py").write_text("from xdoe import a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from xdoe.a import f\n")
    graph = _graph_module()
    assert graph.cycles(graph.import_graph(tmp_path)) == [["xdoe.a", "xdoe.b"]]


def test_every_module_imports_on_its_own() -> None:
    """Each module in a fresh interpreter state: before each import every
    ``xdoe`` module is dropped from ``sys.modules`` (third-party modules stay
    loaded, for speed; one interpreter per module would take minutes), so an
    import that only works after another module was imported fails here."""
    names = sorted(n for n in _graph_module().modules(SRC) if not n.endswith("__main__"))
    code = (
        "import importlib, json, sys\n"
        f"names = {names!r}\n"
        "bad = {}\n"
        "for name in names:\n"
        "    for loaded in [m for m in sys.modules if m == 'xdoe' or m.startswith('xdoe.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        bad[name] = f'{type(exc).__name__}: {exc}'\n"
        "print(json.dumps(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(SRC)})
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_no_sql_outside_the_store() -> None:
    """Only ``xdoe/store`` imports SQLAlchemy or opens store transactions."""
    offenders = []
    for path in sorted((SRC / "xdoe").rglob("*.py")):
        rel = path.relative_to(SRC / "xdoe")
        if rel.parts[0] == "store":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""]
            else:
                mods = []
            if any(m == "sqlalchemy" or m.startswith("sqlalchemy.") for m in mods):
                offenders.append(f"{rel}:{node.lineno}: imports sqlalchemy")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("_read", "_write", "session") and \
                    ast.unparse(node.func.value).split(".")[-1] in ("store", "db", "_store"):
                offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node.func)}")
            if isinstance(node, ast.ImportFrom) and node.module == "xdoe.store":
                orm = {"Base", "StoreMeta", "Experiment", "Run", "RunInstance", "Phase", "Episode",
                       "Step", "Checkpoint", "BrainSource", "Claim"}
                offenders += [f"{rel}:{node.lineno}: imports the ORM model {a.name}"
                              for a in node.names if a.name in orm]
    assert offenders == []


def test_the_store_exports_no_orm_model() -> None:
    import xdoe.store

    orm = {"Base", "StoreMeta", "Experiment", "Run", "RunInstance", "Phase", "Episode", "Step",
           "Checkpoint", "BrainSource", "Claim"}
    assert not orm & set(xdoe.store.__all__)


def test_no_module_is_longer_than_the_ceiling() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in _graph_module().modules(SRC).items()}
    assert len(sizes) > 100 and max(sizes.values()) > 300  # the modules are read at all
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_MODULE_LINES}
    assert too_long == {}, f"split these modules (ceiling {MAX_MODULE_LINES} lines): {too_long}"
