"""The built-in components live in ``xdoe.components``; the old packages
``xdoe.agents`` and ``xdoe.environments`` stay as aliases (issue 11), so
documents, full module paths and pickles naming them load the same classes."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
from pathlib import Path

import pytest

from xdoe.design.runfiles import generate
from xdoe.execution import load_class, run

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
KINDS = ["agents", "environments"]


@pytest.mark.parametrize("kind", KINDS)
def test_old_package_names_are_the_new_objects(kind: str) -> None:
    new = importlib.import_module(f"xdoe.components.{kind}")
    old = importlib.import_module(f"xdoe.{kind}")
    assert old.__all__ == new.__all__ and len(new.__all__) >= 4
    for name in new.__all__:
        assert getattr(old, name) is getattr(new, name)
        assert load_class(f"xdoe.{kind}:{name}", "k") is load_class(f"xdoe.components.{kind}:{name}", "k")
    modules = [m.name for m in pkgutil.iter_modules(new.__path__)]
    assert len(modules) >= 4
    for module in modules:  # full module paths, as documents and pickles may name them
        assert importlib.import_module(f"xdoe.{kind}.{module}") is importlib.import_module(
            f"xdoe.components.{kind}.{module}")


def test_a_brain_pickled_under_the_old_path_loads() -> None:
    from xdoe.components.agents import QTable

    table = QTable(4, 2, initial=0.5)
    data = pickle.dumps(table, protocol=0)  # text opcodes: the module path can be rewritten
    assert b"xdoe.components.agents._qtable" in data
    # QTable lived in _qlearning (and before that in xdoe.agents._qlearning): pickles naming
    # those modules load
    for path in (b"xdoe.agents._qlearning", b"xdoe.components.agents._qlearning", b"xdoe.agents._qtable"):
        loaded = pickle.loads(data.replace(b"xdoe.components.agents._qtable", path))
        assert type(loaded) is QTable and loaded.initial == 0.5


@pytest.mark.parametrize("prefix", ["xdoe.", "xdoe.components."])
def test_documents_with_old_and_new_addresses_run(tmp_path: Path, prefix: str) -> None:
    text = (EXPERIMENTS / "dummy.yaml").read_text(encoding="utf-8")
    assert "xdoe.agents:DummyBrain" in text and "xdoe.environments:DummyEnvironment" in text
    text = text.replace("xdoe.agents:", f"{prefix}agents:").replace("xdoe.environments:", f"{prefix}environments:")
    (tmp_path / "study.yaml").write_text(text, encoding="utf-8")
    runs, _design = generate(tmp_path / "study.yaml")
    document = runs[0]
    assert document["schedule"][0]["training"]["agents"][0]["brain"]["name"] == f"{prefix}agents:DummyBrain"
    result = run(document, store=f"sqlite:///{tmp_path / 'store.sqlite'}", results=str(tmp_path / "results"))
    assert result.status == "finished", result.traceback
    assert [p.episodes for p in result.phases] == [3, 2]
