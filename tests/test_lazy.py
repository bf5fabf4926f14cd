"""Lazy re-exports (xdoe._lazy): the packages behave as with eager imports."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from xdoe._lazy import lazy_exports

LAZY_PACKAGES = ["xdoe.documents", "xdoe.execution", "xdoe.store", "xdoe.environments", "xdoe.agents",
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
        "bad = [m for m in ('xdoe.session', 'xdoe.campaign.backends._base', 'xdoe.store._export',\n"
        "                   'xdoe.store._status', 'xdoe.store._lineage', 'xdoe.documents._experiment')\n"
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
