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
    assert "xdoe.store._tables" in edges["xdoe.store._rules"]
    assert "xdoe.store._tables" in edges["xdoe.store._recorder"]    # `from xdoe.store import _tables as t`
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


def _lazy_packages() -> list[str]:
    return sorted(".".join(p.parent.relative_to(SRC).parts) for p in SRC.rglob("__init__.py")
                  if "lazy_exports(" in p.read_text())


def _type_checking_imports(path: Path) -> tuple[dict[str, str], set[str]]:
    """``{name: module}`` of the ``if TYPE_CHECKING:`` imports of ``path``, and
    the names imported in the re-export form ``Name as Name``."""
    imported: dict[str, str] = {}
    reexported: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, f"{path}:{stmt.lineno}: not a from-import"
                for alias in stmt.names:
                    name = alias.asname or alias.name
                    assert name not in imported, f"{path}: {name} imported twice"
                    imported[name] = stmt.module
                    if alias.asname == alias.name:
                        reexported.add(name)
    return imported, reexported


def test_every_lazy_package_lists_its_names_once() -> None:
    """The lazy_exports map is the one list of a package's names: the
    TYPE_CHECKING imports (for type checkers) name the same names from the same
    modules, and ``__all__`` holds the map's names but the unlisted ones; where
    ``__all__`` is derived (not a literal), each public name is imported as
    ``Name as Name`` so that type checkers see it re-exported."""
    import importlib

    from xdoe._lazy import lazy_names

    packages = _lazy_packages()
    assert {"xdoe.store", "xdoe.execution", "xdoe.documents"} <= set(packages)
    for package in packages:
        path = SRC.joinpath(*package.split("."), "__init__.py")
        module = importlib.import_module(package)
        origin, unlisted = lazy_names(package)
        imported, reexported = _type_checking_imports(path)
        assert imported == origin, f"{path}: TYPE_CHECKING imports and the lazy_exports map differ: " \
            f"{sorted(set(imported.items()) ^ set(origin.items()))}"
        public = module.__all__
        assert len(set(public)) == len(public), f"{package}.__all__ lists a name twice"
        assert set(public) == set(origin) - unlisted, \
            f"{package}.__all__ and the map differ: {sorted(set(public) ^ (set(origin) - unlisted))}"
        literal = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
                      and isinstance(n.value, ast.List) for n in ast.parse(path.read_text()).body)
        if not literal:
            assert set(public) <= reexported, f"{path}: import as `Name as Name`: {sorted(set(public) - reexported)}"
            assert not reexported & unlisted, f"{path}: unlisted names imported as re-exports"


def test_public_names_refuses_a_name_listed_twice() -> None:
    import pytest

    from xdoe._lazy import public_names

    assert public_names({"a": ["x", "y"], "b": ["z"]}) == ["x", "y", "z"]
    with pytest.raises(ValueError, match="listed more than once: y"):
        public_names({"a": ["x", "y"], "b": ["y"]})


def test_no_import_cycle_with_type_checking_imports() -> None:
    """Issue 23.3: no cycle at any level, the imports under ``if TYPE_CHECKING:``
    included (the store's mixins type their store as a base class, never as
    ``Store``, which imports them)."""
    graph = _graph_module()
    plain = graph._imports

    def every_import(tree: ast.AST, *, type_checking: bool = False) -> list[tuple[ast.AST, bool]]:
        return plain(tree, type_checking=True)

    graph._imports = every_import
    try:
        edges = graph.import_graph(SRC)
    finally:
        graph._imports = plain
    assert "xdoe.store._base" in edges["xdoe.store._recorder_state"]  # a TYPE_CHECKING import is read
    assert graph.cycles(edges) == []


def test_no_private_store_module_is_imported_outside_the_store() -> None:
    """Issue 23.3: code outside ``xdoe/store`` uses :class:`xdoe.store.Store`
    and the names of ``xdoe.store.__all__``, never ``xdoe.store._*``."""
    offenders = []
    for path in sorted((SRC / "xdoe").rglob("*.py")):
        rel = path.relative_to(SRC / "xdoe")
        if rel.parts[0] == "store":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{rel}:{node.lineno}: {n}" for n in names if n.startswith("xdoe.store._")]
    assert offenders == []
