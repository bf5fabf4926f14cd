"""Lazy re-exports (xdoe._lazy): the packages behave as with eager imports."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from xdoe._lazy import lazy_exports

LAZY_PACKAGES = ["xdoe.documents", "xdoe.design", "xdoe.execution", "xdoe.store", "xdoe.components.environments",
                 "xdoe.components.agents", "xdoe.environments", "xdoe.agents",
                 "xdoe.analysis"]


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_public_name_resolves_from_its_module(name: str) -> None:
    package = importlib.import_module(name)
    assert set(package.__all__) <= set(dir(package))
    for public in package.__all__:
        value = getattr(package, public)
        origin = getattr(value, "__module__", None)
        if isinstance(origin, str) and origin.startswith(name + "._"):
            assert getattr(importlib.import_module(origin), public) is value
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'NoSuchName'"):
        package.NoSuchName  # noqa: B018
    assert "TYPE_CHECKING" not in dir(package) and "lazy_exports" not in dir(package)


def test_star_import_and_cache() -> None:
    namespace: dict[str, object] = {}
    exec("from xdoe.environments import *", namespace)  # noqa: S102
    assert {"DummyEnvironment", "GymnasiumEnvironment", "TicTacToeEnvironment"} <= set(namespace)
    namespace = {"__all__": ["dumps"], "helper": object()}
    getattr_, dir_ = lazy_exports("pkg", namespace, {"json": ["dumps"]})
    assert dir_() == ["__all__", "dumps"]  # not the helper
    dumps = getattr_("dumps")
    assert dumps is importlib.import_module("json").dumps and namespace["dumps"] is dumps  # cached


def test_importing_a_name_loads_only_its_module() -> None:
    code = (
        "import sys\n"
        "from xdoe.execution import run\n"
        "from xdoe.store import Store\n"
        "from xdoe.documents import load_run_document\n"
        "bad = [m for m in ('xdoe.session', 'xdoe.campaign.backends._base', 'xdoe.store.views._export',\n"
        "                   'xdoe.store.views._status', 'xdoe.store.views._lineage', 'xdoe.documents._experiment',\n"
        "                   'xdoe.documents._experiment_models')\n"
        "       if m in sys.modules]\n"
        "print(','.join(bad) or 'clean')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "clean"


def test_core_stays_torch_free() -> None:
    """torch (xdoe[sb3]) and pettingzoo are imported only by their adapters."""
    code = ("import sys, xdoe, xdoe.agents, xdoe.environments, xdoe.execution, xdoe.environment\n"
            "from xdoe.agents import QLearningBrain, DummyMuscle, RewardObjective\n"
            "from xdoe.environments import GymnasiumEnvironment, TicTacToeEnvironment\n"
            "bad = sorted(m for m in ('torch', 'stable_baselines3', 'pettingzoo') if m in sys.modules)\n"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_alias_package_gives_the_same_modules_and_classes(tmp_path) -> None:
    (tmp_path / "newpkg").mkdir()
    (tmp_path / "newpkg" / "__init__.py").write_text(
        "from xdoe._lazy import lazy_exports\n__all__ = ['Thing']\n"
        "__getattr__, __dir__ = lazy_exports(__name__, globals(), {'newpkg._things': ['Thing']})\n")
    (tmp_path / "newpkg" / "_things.py").write_text("class Thing:\n    pass\n")
    (tmp_path / "oldpkg").mkdir()
    (tmp_path / "oldpkg" / "__init__.py").write_text(
        "from xdoe._lazy import alias_package\n"
        "__getattr__, __dir__, __all__ = alias_package(__name__, 'newpkg')\n")
    code = (
        "import importlib, pickle, sys\n"
        "import oldpkg\n"
        "assert 'newpkg._things' not in sys.modules  # still lazy\n"
        "from oldpkg._things import Thing as A\n"
        "import newpkg._things, oldpkg._things\n"
        "assert oldpkg._things is newpkg._things and oldpkg.Thing is A is newpkg.Thing\n"
        "assert newpkg._things.__spec__.name == 'newpkg._things' and A.__module__ == 'newpkg._things'\n"
        "old = pickle.dumps(A()).replace(b'newpkg._things', b'oldpkg._things')\n"
        "assert b'oldpkg' in old and type(pickle.loads(old)) is A\n"
        "assert oldpkg.__all__ == ['Thing'] and dir(oldpkg) == ['Thing', '__all__']\n"
        "try:\n    oldpkg.Nope\nexcept AttributeError as exc:\n    print(exc)\n"
        "try:\n    import oldpkg._missing\nexcept ModuleNotFoundError as exc:\n    print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["module 'oldpkg' has no attribute 'Nope'",
                                        "No module named 'oldpkg._missing'"]
