"""The import graph of the ``xdoe`` package, built from the source with :mod:`ast`.

Every ``import``/``from ... import`` counts (also inside functions), except
those under ``if TYPE_CHECKING:`` unless asked (``type_checking=True``).
``from xdoe.pkg import Name`` is resolved to the private module that defines
``Name`` (read from the package ``__init__``'s imports), so a cycle through a
lazily re-exporting package is found too.

Usage:

- ``python scripts/import_graph.py [SRC]`` prints the cycles (strongly
  connected components of more than one module; run-time imports, then with
  ``TYPE_CHECKING`` imports counted too), the number of imports inside
  functions and the largest modules; exit 1 when there is a cycle.
- ``python scripts/import_graph.py --packages [SRC]`` prints the
  package-level dependency graph as a Mermaid flowchart (the diagram of
  ``docs/architecture.md``, which a test keeps equal to this output).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

__all__ = ["modules", "import_graph", "cycles", "function_imports", "package_of", "package_graph",
           "package_mermaid", "private_imports", "FOUNDATION"]


def modules(src: Path) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file under ``src/xdoe``."""
    out = {}
    for path in sorted((src / "xdoe").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, *, type_checking: bool = False) -> list[tuple[ast.AST, bool]]:
    """(import node, inside a function) pairs; skip ``if TYPE_CHECKING`` unless asked."""
    found: list[tuple[ast.AST, bool]] = []

    def visit(node: ast.AST, in_func: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_checking:
                for sub in child.orelse:
                    visit(sub, in_func)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, in_func))
            visit(child, in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _origins(mods: dict[str, Path]) -> dict[str, dict[str, str]]:
    """Package -> {public name -> defining module}, from the package ``__init__``."""
    origins: dict[str, dict[str, str]] = {}
    for name, path in mods.items():
        if path.name != "__init__.py":
            continue
        table: dict[str, str] = {}
        for node, _ in _imports(ast.parse(path.read_text()), type_checking=True):
            if isinstance(node, ast.ImportFrom):
                target = _absolute(name, node, True)
                for alias in node.names:
                    table[alias.asname or alias.name] = target
        origins[name] = table
    return origins


def import_graph(src: Path, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the ``xdoe`` modules it imports (at run time; with
    ``type_checking`` also those under ``if TYPE_CHECKING:``)."""
    mods = modules(src)
    origins = _origins(mods)

    def resolve(target: str, name: str | None) -> str | None:
        if name is not None and f"{target}.{name}" in mods:
            return f"{target}.{name}"
        seen = 0
        while name is not None and target in origins and name in origins[target] and seen < 5:
            nxt = origins[target][name]
            if nxt == target:
                break
            target, seen = nxt, seen + 1
        return target if target in mods else None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node, _ in _imports(ast.parse(path.read_text()), type_checking=type_checking):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [a.name if a.name in mods else None for a in node.names]
            else:
                base = _absolute(name, node, is_pkg)
                targets = [resolve(base, a.name) for a in node.names]
            for t in targets:
                if t and t.startswith("xdoe") and t != name:
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def function_imports(src: Path) -> int:
    """Number of ``xdoe`` imports placed inside functions."""
    n = 0
    for name, path in modules(src).items():
        for node, in_func in _imports(ast.parse(path.read_text())):
            if not in_func:
                continue
            target = (node.names[0].name if isinstance(node, ast.Import)
                      else _absolute(name, node, path.name == "__init__.py"))
            n += target.startswith("xdoe")
    return n


#: Modules every package may import, left out of the package diagram (the
#: error hierarchy and small helpers that import no other ``xdoe`` package).
FOUNDATION = ("errors", "_files", "_process", "_lazy", "_random", "_cuts", "_extras")
#: Alias packages (``xdoe._lazy.alias_package``) drawn as the package they stand for.
_ALIAS_PACKAGES = {"agents": "components", "environments": "components"}


def package_of(module: str) -> str:
    """The top-level part of ``module`` below ``xdoe`` (``xdoe.store._rules`` ->
    ``store``; ``xdoe.errors`` -> ``errors``; ``xdoe`` itself -> ``xdoe``)."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else parts[0]
    return _ALIAS_PACKAGES.get(name, name)


def package_graph(src: Path, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Package -> the packages its modules import (:func:`package_of` of both
    ends of every edge of :func:`import_graph`; an import inside a package is
    not an edge)."""
    out: dict[str, set[str]] = {}
    for module, targets in import_graph(src, type_checking=type_checking).items():
        pkg = package_of(module)
        out.setdefault(pkg, set()).update(package_of(t) for t in targets if package_of(t) != pkg)
    return out


def package_mermaid(src: Path) -> str:
    """The package-level dependency graph (run-time imports) as a Mermaid
    flowchart, one edge ``a --> b`` per line ("a imports b"), sorted; the
    :data:`FOUNDATION` modules and the root package ``xdoe`` are left out.
    Package-level cycles (run time, then with ``TYPE_CHECKING`` imports
    counted) follow as Mermaid comments (``%%``)."""
    graph = package_graph(src)
    skip = set(FOUNDATION) | {"xdoe"}
    lines = ["flowchart TD"]
    for pkg in sorted(p for p in graph if p not in skip):
        targets = sorted(t for t in graph[pkg] if t not in skip)
        lines += [f"    {pkg} --> {t}" for t in targets] or [f"    {pkg}"]
    run_time = cycles(graph)
    typed = [c for c in cycles(package_graph(src, type_checking=True)) if c not in run_time]
    lines += [f"    %% package cycle: {' <-> '.join(c)}" for c in run_time]
    lines += [f"    %% package cycle with TYPE_CHECKING imports: {' <-> '.join(c)}" for c in typed]
    return "\n".join(lines) + "\n"


def private_imports(src: Path) -> list[tuple[str, str]]:
    """``(importing module, imported module)`` for every import (also under
    ``TYPE_CHECKING`` and inside functions) of another package's private
    module: ``xdoe.P._m``, ``xdoe.P.sub._m`` (or a private name ``_n`` from
    any of them) imported outside package ``P``: every dotted component counts."""
    found: list[tuple[str, str]] = []
    for name, path in modules(src).items():
        own = package_of(name)
        for node, _ in _imports(ast.parse(path.read_text()), type_checking=True):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = _absolute(name, node, path.name == "__init__.py")
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                parts = target.split(".")
                if len(parts) < 3 or parts[0] != "xdoe" or package_of(target) == own:
                    continue
                # every dotted component below the package: xdoe.P._m, xdoe.P.sub._m, a name _n
                private = next((i for i, part in enumerate(parts[2:], 2)
                                if part.startswith("_") and not part.startswith("__")), None)
                if private is not None:
                    found.append((name, ".".join(parts[:private + 1])))
                    break
    return sorted(found)


def main(argv: list[str]) -> int:
    args = argv[1:]
    packages = "--packages" in args
    args = [a for a in args if a != "--packages"]
    src = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src"
    if packages:
        print(package_mermaid(src), end="")
        return 0
    found = cycles(import_graph(src))
    for comp in found:
        print("cycle:", " <-> ".join(comp))
    typed = [c for c in cycles(import_graph(src, type_checking=True)) if c not in found]
    for comp in typed:
        print("cycle (TYPE_CHECKING imports counted):", " <-> ".join(comp))
    private = private_imports(src)
    sizes = sorted(((len(p.read_text().splitlines()), n) for n, p in modules(src).items()), reverse=True)
    print(f"{len(found)} cycle(s), {len(typed)} more with TYPE_CHECKING imports; "
          f"{len(private)} imports of another package's private module; "
          f"{function_imports(src)} xdoe imports inside functions")
    print("largest modules:", ", ".join(f"{n} {lines}" for lines, n in sizes[:5]))
    return 1 if found or typed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
