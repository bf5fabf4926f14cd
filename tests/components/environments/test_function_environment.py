"""FunctionEnvironment: a known function of its parameters plus seeded noise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from gymnasium import spaces

from xdoe.components.environments import FunctionEnvironment
from xdoe.errors import ComponentError

HERE = str(Path(__file__).resolve().parent)


def plane(a: float, b: float = 2.0) -> float:
    """A function of this module, named ``test_function_environment:plane``."""
    return 3.0 * a - b


def not_a_number(a: float) -> str:
    return "high"


def infinite(a: float) -> float:
    return math.inf


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """This module importable by name, as a run's function module is (``PYTHONPATH``)."""
    monkeypatch.syspath_prepend(HERE)


def test_one_step_episodes_pay_the_function_plus_the_seeded_noise() -> None:
    env = FunctionEnvironment("f", seed=5, function="test_function_environment:plane", a=4, noise=0.5)
    assert env.mean == 10.0  # 3 * 4 - 2: the function's default for b
    base = env.start_environment()
    assert [(s.uid, s.space, s.value) for s in base.sensors] == [("f.s", spaces.Discrete(2), 0)]
    assert [(a.uid, a.space) for a in base.actuators] == [("f.a", spaces.Discrete(2))]
    rng = np.random.default_rng(5)  # Environment.rng: default_rng(seed)
    for _ in range(3):
        env.start_environment()
        state = env.update(base.actuators)
        assert state.done
        (reward,) = state.rewards
        assert reward.uid == "f.reward" and reward.value == 10.0 + 0.5 * float(rng.standard_normal())


def test_without_noise_the_reward_is_the_function() -> None:
    env = FunctionEnvironment("f", seed=1, function="test_function_environment:plane", a=1.5, b=0.5, noise=0)
    assert [env.update([]).rewards[0].value for _ in range(3)] == [4.0, 4.0, 4.0]


@pytest.mark.parametrize(("params", "error", "match"), [
    ({"function": "no_such_module_xyz:f"}, ComponentError, "function: cannot import module 'no_such_module_xyz'"),
    ({"function": "test_function_environment:plan"}, ComponentError, "did you mean plane"),
    ({"function": "plane"}, ComponentError, "expected a name 'pkg.module:function'"),
    ({"function": "test_function_environment:HERE"}, TypeError, "is not callable but str"),
    ({"function": "test_function_environment:plane", "c": 1}, ValueError,
     r"function: test_function_environment:plane\(a=1.0, c=1\) raised TypeError: .*unexpected keyword argument 'c'"),
    ({"function": "test_function_environment:not_a_number"}, ValueError, "returned 'high', not a number"),
    ({"function": "test_function_environment:infinite"}, ValueError, "returned inf, not a finite number"),
    ({"function": "test_function_environment:plane", "noise": -1}, ValueError, "noise must be a finite number >= 0"),
])
def test_bad_parameters_are_refused_with_what_was_tried(params: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        FunctionEnvironment("f", seed=0, **{"a": 1.0, **params})


def test_a_study_of_it_recovers_the_function(tmp_path: Path) -> None:
    """Known truth end to end: xgen + xrun of a 2 x 2 study; each design point's
    mean reward is the function's value within the noise's standard error."""
    from dummy_study import known_truth_study  # tests/ is on the path (pyproject's pythonpath)

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate
    from xdoe.store import Store

    doc = known_truth_study("plane", "test_function_environment:plane",
                            {"a": {"levels": [1.0, 2.0]}, "b": {"levels": [0.0, 4.0]}}, "full_factorial",
                            noise=0.2, episodes=25)
    out = tmp_path / "_outputs"
    generate(doc, out)
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    done = CliRunner().invoke(main, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", url, "--results", str(tmp_path / "results")])
    assert done.exit_code == 0, done.output
    by_run: dict[str, list[float]] = {}
    with Store(url, create=False) as store:
        for e in store.runs.episodes():
            by_run.setdefault(e["run"], []).append(e["reward"])
    assert len(by_run) == 4 and all(len(v) == 25 for v in by_run.values())
    import yaml
    for path in sorted(out.glob("run-*.yaml")):
        run = yaml.safe_load(path.read_text())
        params = run["schedule"][0]["testing"]["environments"][0]["environment"]["params"]
        mean = float(np.mean(by_run[run["uid"]]))
        assert abs(mean - plane(params["a"], params["b"])) < 4 * 0.2 / 5, (params, mean)


def test_a_bad_function_fails_its_run_with_what_was_tried(tmp_path: Path) -> None:
    """A constructor's error is the run's (as for every component): the run
    fails with the located message, exit 1, its neighbour finishes."""
    from dummy_study import known_truth_study  # tests/ is on the path (pyproject's pythonpath)

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate

    doc = known_truth_study("bad", "test_function_environment:plane", {"a": {"levels": [1.0, "x"]}},
                            "full_factorial")
    out = tmp_path / "_outputs"
    generate(doc, out)
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    done = CliRunner().invoke(main, ["experiment-start", str(out), "--quiet", "--in-process",
                                     "--store", url, "--results", str(tmp_path / "results")])
    assert done.exit_code == 1, done.output
    assert "run bad-0001 failed: schedule[0].testing.environments[0].environment: " \
        "xdoe.components.environments:FunctionEnvironment(...) raised ValueError: function: " \
        "test_function_environment:plane(a='x') raised TypeError: can't multiply sequence" in done.output
    from xdoe.store import Store

    with Store(url, create=False) as store:
        assert {e["run"] for e in store.runs.episodes()} == {"bad-0000"}
