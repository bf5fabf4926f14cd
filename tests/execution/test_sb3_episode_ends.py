"""An SB3 run with a step budget, as the CartPole study runs it: the episode
the budget cuts is recorded truncated by ``step_budget`` and left out of the
learning curve; CartPole's own time limit is ``environment``, a fallen pole
``terminated``."""

from __future__ import annotations

import pytest

pytest.importorskip("stable_baselines3")

from test_sb3_runner import PPO, cartpole, doc  # noqa: E402

from xdoe.execution import run  # noqa: E402

BUDGET = 1500


@pytest.mark.slow
def test_a_ppo_run_cut_by_its_step_budget(store, tmp_path):
    import xdoe.results
    from xdoe.analysis._curves import episode_x
    from xdoe.store import curve_phases, run_episodes

    phase = cartpole("PPO", PPO, episodes=100_000)
    phase["simulation"]["conditions"] = [
        {"name": "xdoe.conditions:EnvironmentTerminationCondition"},
        {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": BUDGET}}]
    result = run(doc("ppo-budget", ("training", phase)), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    frame = xdoe.results.load(store)
    assert int(frame["steps"].sum()) == BUDGET
    last, before = frame.iloc[-1], frame.iloc[:-1]
    assert (last["terminated"], last["truncated"], last["cut_by"]) == (False, True, "step_budget")
    ends = {(bool(t), bool(u), c if isinstance(c, str) else None)
            for t, u, c in zip(before["terminated"], before["truncated"], before["cut_by"])}
    assert ends <= {(True, False, None), (False, True, "environment")}
    assert ((before["cut_by"] == "environment") == (before["steps"] == 60)).all()  # the 60-step time limit
    (_, y, steps, wall, cut, cut_rows), = run_episodes(store.database, [p.phase_id for p in curve_phases(store.database).phases],
                                                       "objective")
    x = episode_x(steps, wall, "steps")[~cut]  # the curve's x: the cut episode has no point
    assert cut_rows == 1 and len(x) == len(frame) - 1 and x[-1] == BUDGET - last["steps"]
