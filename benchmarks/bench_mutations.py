"""Mutation sweep of experiment documents (session 8, "nothing silent"):
apply one mutation at a time to each document and run ``xgen generate`` on
it in a fresh folder, then sort the outcome.

Mutations, at every key of the document: a typo of the key (two letters
swapped) and an unknown key beside it; the key moved one level up and into
a sibling mapping; every scalar turned into a string, a list, a boolean,
null, a negative number, zero, a float; every mapping or list emptied,
nulled, turned into a string.

Outcomes:

* ``error``: exit 2, one ``error:`` line, nothing written;
* ``warning``: exit 0 with a ``warning:`` line;
* ``ignored``: exit 0, no word, run files identical to the unmutated
  document's (the mutation did nothing; often harmless: ``params: {}`` to
  ``params: null``);
* ``changed``: exit 0, no word, run files differ (a value changed: mostly
  legitimate, e.g. a level or a component's param, which xgen does not
  check; every one is listed with ``--list`` to be read);
* ``bad``: a traceback, another exit code, or something written on exit 2.

    python benchmarks/bench_mutations.py experiments/dummy.yaml experiments/taxi.yaml [--list]
"""

from __future__ import annotations

import argparse
import copy
import io
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from click.testing import CliRunner
from ruamel.yaml import YAML

from xdoe.cli._xgen import main as xgen

_YAML = YAML(typ="safe", pure=True)
_YAML.default_flow_style = False


def _dump(data: Any) -> str:
    out = io.StringIO()
    _YAML.dump(data, out)
    return out.getvalue()


def _typo(key: str) -> str:
    if len(key) < 4:
        return key + key[-1]
    i = len(key) // 2
    return key[:i] + key[i + 1] + key[i] + key[i + 2:] if key[i] != key[i + 1] else key[:i] + key[i + 1:]


def _get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


def _keys(node: Any, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix, key
            yield from _keys(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _keys(value, prefix + (i,))


def _nodes(node: Any, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if prefix:
        yield prefix, node
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in children:
        yield from _nodes(value, prefix + (key,))


def mutations(data: dict) -> Iterator[tuple[str, str, dict]]:
    """``(kind, where, mutated document)`` for every mutation of ``data``."""
    for parent, key in _keys(data):
        if not isinstance(key, str):
            continue
        where = ".".join(map(str, parent + (key,)))
        typo = _typo(key)
        if typo not in _get(data, parent):
            m = copy.deepcopy(data)
            mapping = _get(m, parent)
            renamed = {typo if k == key else k: v for k, v in mapping.items()}
            mapping.clear()
            mapping.update(renamed)
            yield "typo", f"{where}->{typo}", m
        m = copy.deepcopy(data)
        _get(m, parent)["zz_" + key] = 1
        yield "unknown key", f"{where} (zz_{key})", m
        if parent and isinstance(_get(data, parent[:-1]), dict) and key not in _get(data, parent[:-1]):
            m = copy.deepcopy(data)
            _get(m, parent[:-1])[key] = _get(m, parent).pop(key)
            yield "moved up", where, m
        siblings = [s for s, v in _get(data, parent).items() if s != key and isinstance(v, dict) and key not in v]
        if siblings:
            m = copy.deepcopy(data)
            mapping = _get(m, parent)
            mapping[siblings[0]][key] = mapping.pop(key)
            yield "moved down", f"{where}->{siblings[0]}", m
    for path, value in _nodes(data):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if isinstance(value, (dict, list)):
            replacements = {"emptied": type(value)(), "null": None, "string": "x"}
        else:
            replacements = {"string": str(value), "list": [value], "boolean": True, "null": None}
            if number:
                replacements.update({"negative": -1, "zero": 0, "float": 1.5})
        for label, new in replacements.items():
            if new == value and type(new) is type(value):
                continue
            m = copy.deepcopy(data)
            _get(m, path[:-1])[path[-1]] = new
            yield label, ".".join(map(str, path)), m


def _generate(text: str, extra_files: list[Path], root: Path) -> tuple[int, str, dict[str, bytes], bool]:
    folder = Path(tempfile.mkdtemp(dir=root))
    for extra in extra_files:
        shutil.copy(extra, folder / extra.name)
    (folder / "doc.yaml").write_text(text, encoding="utf-8")
    before = {p for p in folder.rglob("*")}
    cwd = os.getcwd()
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    try:
        result = CliRunner().invoke(xgen, ["generate", "doc.yaml"])
    finally:
        os.chdir(cwd)
        sys.path.remove(str(folder))
    written = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
               if p not in before and p.is_file() and (p.suffix == ".yaml" or p.name.startswith("design"))}
    wrote = any(p not in before for p in folder.rglob("*"))
    shutil.rmtree(folder)
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    return result.exit_code, result.output if not crashed else f"traceback: {result.exception!r}", \
        written, wrote or crashed


def sweep(document: Path, root: Path) -> list[tuple[str, str, str, str]]:
    """``(outcome, kind, where, first line)`` of every mutation of ``document``."""
    text = document.read_text(encoding="utf-8")
    extras = [p for p in document.parent.glob("*.py")]  # plugin modules a document names (peak.py)
    code, output, baseline, _ = _generate(text, extras, root)
    if code != 0:
        raise SystemExit(f"{document}: does not generate as it is: {output}")
    found = []
    for kind, where, mutated in mutations(_YAML.load(text)):
        code, output, written, wrote = _generate(_dump(mutated), extras, root)
        lines = [line for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("error:")]
        warnings = [line for line in lines if line.startswith("warning:")]
        if output.startswith("traceback") or code not in (0, 2) or (code == 2 and (wrote or len(errors) != 1)):
            outcome = "bad"
        elif code == 2:
            outcome = "error"
        elif warnings:
            outcome = "warning"
        else:
            outcome = "ignored" if written == baseline else "changed"
        found.append((outcome, kind, where, (errors or warnings or lines or [""])[0][:160]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("documents", nargs="+", type=Path)
    parser.add_argument("--list", action="store_true", help="list every mutation that was not an error")
    args = parser.parse_args()
    total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for document in args.documents:
            found = sweep(document.resolve(), Path(tmp))
            counts = Counter(outcome for outcome, *_ in found)
            total.update(counts)
            print(f"{document}: {len(found)} mutations: "
                  + ", ".join(f"{counts[o]} {o}" for o in ("error", "warning", "ignored", "changed", "bad")))
            if args.list:
                for outcome, kind, where, first in found:
                    if outcome != "error":
                        print(f"  {outcome:8} {kind:12} {where} | {first}")
    print(f"total: {sum(total.values())} mutations: "
          + ", ".join(f"{total[o]} {o}" for o in ("error", "warning", "ignored", "changed", "bad")))


if __name__ == "__main__":
    main()
