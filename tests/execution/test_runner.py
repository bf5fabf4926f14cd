"""The phase / episode / step loop, on real components (tests/execution/components.py
and the built-ins), recorded in a real SQLite store."""

from __future__ import annotations

import components
import pytest
from runbuilders import counting_phase, run_document, taxi_phase
from sqlalchemy import func, select

from xdoe.execution import run


@pytest.fixture(autouse=True)
def _clear_brains():
    components.BRAINS.clear()
    components.MUSCLES.clear()
    yield
    components.BRAINS.clear()
    components.MUSCLES.clear()


def _episodes(store, uid):
    return [
        (e["phase"], e["worker"], e["episode"], e["agent"], e["steps"], e["reward"], e["objective"])
        for e in store.runs.episodes(uid)
    ]


def test_same_document_gives_identical_episodes(store, tmp_path):
    doc = run_document(("training", taxi_phase(episodes=6, worker=2)),
                       ("testing", {"phase_config": {"mode": "test", "episodes": 3}}))
    first = run(doc, store=store, results=tmp_path / "r")
    second = run(doc, store=store, results=tmp_path / "r", rerun=True)
    assert first.ok and second.ok, first.traceback
    rows = list(store.runs.episodes("test-run", instance_id=first.instance_id))
    rows2 = list(store.runs.episodes("test-run", instance_id=second.instance_id))
    assert len(rows) == 6 * 2 + 3 * 2
    strip = lambda rs: [(r["phase"], r["worker"], r["episode"], r["steps"], r["reward"]) for r in rs]
    assert strip(rows) == strip(rows2)
    # a different seed changes the episodes
    third = run({**doc, "seed": 12}, store=store, results=tmp_path / "r")
    rows3 = list(store.runs.episodes("test-run", instance_id=third.instance_id))
    assert strip(rows3) != strip(rows)


def test_workers_lockstep_episode_budget_and_shared_brain(store, tmp_path):
    doc = run_document(("training", counting_phase(episodes=3, worker=2, length=4)))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    (brain,) = components.BRAINS
    # 2 workers x 3 episodes x 4 steps, interleaved round-robin step by step
    assert len(brain.experiences) == 24
    assert [e[0] for e in brain.experiences[:4]] == [0, 1, 0, 1]
    assert sorted({(w, ep) for w, ep, *_ in brain.experiences}) == [
        (w, e) for w in range(2) for e in range(3)]
    assert [e[4] for e in brain.experiences if e[0] == 0 and e[1] == 0] == [False, False, False, True]
    assert result.phases[0].episodes == 6 and result.phases[0].steps == 24
    assert len(_episodes(store, "test-run")) == 6


def test_brain_kept_between_phases_and_test_mode_does_not_learn(store, tmp_path):
    doc = run_document(
        ("training", counting_phase(episodes=2, length=3)),
        ("testing", {"phase_config": {"mode": "test", "episodes": 2}}),
    )
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    assert len(components.BRAINS) == 1  # one brain for the whole run
    brain = components.BRAINS[0]
    assert len(brain.experiences) == 6  # train only: thinking is not called in test
    assert brain.mode.value == "test"
    # test-mode muscles push 1 every step: reward 1 per step, 3 steps per episode
    assert result.phases[1].rewards == {"agent": 3.0}
    assert result.mean_rewards("test") == {"agent": 3.0}


def test_all_sensors_by_default_and_only_assigned_ones(store, tmp_path):
    doc = run_document(("training", counting_phase(episodes=1, length=2)))
    assert run(doc, store=store, results=tmp_path / "r").ok
    assert components.BRAINS[0].sensor_ids == ["env.count", "env.noise"]
    components.BRAINS.clear()
    doc = run_document(("training", counting_phase(episodes=1, length=2, sensors=["env.noise"])))
    assert run(doc, store=store, results=tmp_path / "r").ok
    assert components.BRAINS[0].sensor_ids == ["env.noise"]
    assert components.BRAINS[0].actuator_ids == ["env.push"]


def test_unknown_sensor_fails_before_the_phase_with_offered_ids(store, tmp_path):
    doc = run_document(("training", counting_phase(sensors=["env.cuont"])))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.status == "failed"
    assert "schedule[0].training.agents[0].sensors[0]" in result.error
    assert "did you mean 'env.count'" in result.error
    assert "offered: env.count, env.noise" in result.error
    (instance,) = store.runs.instances(run_uid="test-run")
    assert instance.status == "failed" and "ComponentError" in instance.traceback
    assert not components.BRAINS  # nothing ran


def test_value_outside_the_actuator_space_is_a_run_error(store, tmp_path):
    doc = run_document(("training", counting_phase(
        muscle={"name": "components:OutOfSpaceMuscle", "params": {}})))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.status == "failed"
    assert result.error == (
        "agent 'agent': value 7 for actuator 'env.push' is outside its space Discrete(3)")


def test_foreign_actuator_is_a_run_error(store, tmp_path):
    doc = run_document(("training", counting_phase(
        muscle={"name": "components:ForeignActuatorMuscle", "params": {}})))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.status == "failed"
    assert "'env.elsewhere', which is not assigned to it (assigned: env.push)" in result.error


def test_component_errors_name_the_component_and_keep_finished_episodes(store, tmp_path):
    phase = counting_phase(episodes=3, length=5)
    phase["environments"][0]["environment"]["name"] = "components:UpdateRaisingEnvironment"
    result = run(run_document(("training", phase)), store=store, results=tmp_path / "r")
    assert result.status == "failed"
    assert result.error == "environment 'env': update raised ValueError: simulator diverged at step 3"
    (instance,) = store.runs.instances(run_uid="test-run")
    assert "simulator diverged" in instance.traceback and instance.status == "failed"

    doc = run_document(("training", counting_phase(
        brain={"name": "components:ThinkingRaisingBrain", "params": {}})), uid="think")
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.error == "agent 'agent': brain.thinking raised ZeroDivisionError: bad gradient"


def test_reward_component_replaces_the_environment_rewards(store, tmp_path):
    phase = counting_phase(mode="test", episodes=1, length=3,
                           objective={"name": "xdoe.agents:RewardObjective",
                                      "params": {"reward_ids": ["env.double"]}})
    phase["environments"][0]["reward"] = {"name": "components:DoubleReward", "params": {"factor": 3.0}}
    result = run(run_document(("testing", phase)), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    assert result.phases[0].objectives == {"agent": 9.0}  # 3 steps x push 1 x factor 3


def test_conditions_max_steps_agent_objective_and_stop_run(store, tmp_path):
    steps = {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"episode_steps": 2}}
    env_done = {"name": "xdoe.conditions:EnvironmentTerminationCondition"}
    doc = run_document(("testing", counting_phase(mode="test", episodes=3, length=10,
                                                  conditions=[steps, env_done])))
    result = run(doc, store=store, results=tmp_path / "r")
    assert [e[4] for e in _episodes(store, "test-run")] == [2, 2, 2]

    # test mode: reward 1 per step; phase_avg2 >= 3 after two episodes of 4 steps
    objective = {"name": "xdoe.conditions:AgentObjectiveTerminationCondition",
                 "params": {"agent": {"phase_avg2": 3.0}}}
    doc = run_document(("testing", counting_phase(mode="test", episodes=50, length=4,
                                                  conditions=[env_done, objective])), uid="obj")
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.phases[0].episodes == 2 and result.phases[0].stopped_by == "condition"

    doc = run_document(
        ("a", counting_phase(episodes=5)), ("b", {}), uid="stoprun",
        run_condition={"name": "components:StopRunAfter", "params": {"episodes": 2}},
    )
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok and [p.name for p in result.phases] == ["a"]
    assert result.phases[0].episodes == 2 and result.phases[0].stopped_by == "run_condition"


def test_phase_stop_truncates_other_workers_episodes(store, tmp_path):
    stop = {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": 5}}
    doc = run_document(("training", counting_phase(episodes=4, worker=2, length=10,
                                                   conditions=[stop])))
    result = run(doc, store=store, results=tmp_path / "r")
    assert result.ok
    rows = list(store.runs.episodes("test-run"))
    # worker 0 stepped 3 times, worker 1 twice when the 5th update stopped the phase
    assert sorted((r["worker"], r["steps"]) for r in rows) == [(0, 3), (1, 2)]
    assert [r["extras"] for r in rows if r["worker"] == 1][0]["truncated"] is True


def test_muscles_get_brain_updates_and_state(store, tmp_path):
    from xdoe.execution import load_plan, execute_plan

    plan = load_plan(run_document(("training", counting_phase(episodes=1, worker=2, length=2))))
    execute_plan(plan, None)
    brain = components.BRAINS[0]
    assert len(brain.experiences) == 4
    m0, m1 = components.MUSCLES
    assert m0.uid == m1.uid == "agent" and m0.seed != m1.seed
    # muscle_state at phase start, then every update of the brain to every muscle
    assert m0.updates == m1.updates == [("state", 0)] + [("update", n) for n in range(1, 5)]
    assert m0.resets == m1.resets == 1


def test_store_steps_all_records_every_transition(store, tmp_path):
    from xdoe.store import Step

    doc = run_document(("training", counting_phase(episodes=2, length=3)))
    result = run(doc, store=store, results=tmp_path / "r", store_steps="all")
    assert result.ok
    with store.database.session() as session:
        assert session.execute(select(func.count()).select_from(Step)).scalar_one() == 6
    assert (result_dir := tmp_path / "r").exists() and any(result_dir.rglob("*.csv"))


def test_taking_turns_on_tictactoe(store, tmp_path):
    def agent(name, move, reward, brain, muscle):
        return {"name": name, "brain": {"name": brain}, "muscle": {"name": muscle},
                "objective": {"name": "xdoe.agents:RewardObjective",
                              "params": {"reward_ids": [reward]}},
                "sensors": ["ttt.board"], "actuators": [move]}

    phase = {
        "environments": [{"environment": {"name": "xdoe.environments:TicTacToeEnvironment",
                                          "uid": "ttt"}}],
        "agents": [agent("x", "ttt.move_x", "ttt.reward_x", "xdoe.agents:DummyBrain",
                         "xdoe.agents:DummyMuscle"),
                   agent("o", "ttt.move_o", "ttt.reward_o", "xdoe.agents:DummyBrain",
                         "xdoe.agents:DummyMuscle")],
        "simulation": {"name": "xdoe.simulation:TakingTurnsSimController"},
        "phase_config": {"mode": "train", "episodes": 30},
    }
    result = run(run_document(("training", phase)), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    rows = list(store.runs.episodes("test-run"))
    by_episode: dict[int, dict[str, float]] = {}
    for r in rows:
        by_episode.setdefault(r["episode"], {})[r["agent"]] = r["objective"]
    assert len(by_episode) == 30
    for objectives in by_episode.values():
        # a game ends with one winner (+1/-1), an illegal move (-1/0) or a draw (0/0)
        assert sorted(objectives.values()) in ([-1.0, 1.0], [-1.0, 0.0], [0.0, 0.0])
    # the random players move alternately, so most games take several moves
    assert max(r["steps"] for r in rows) >= 5
