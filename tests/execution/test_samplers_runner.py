"""Environment-parameter samplers in run documents: drawn afresh at every
episode from the run seed, stored with the episode, reproducible."""

from __future__ import annotations

import pytest

from xdoe.errors import DocumentError
from xdoe.execution import run


def sampled_doc(params, episodes=5, worker=2, seed=4):
    return {
        "uid": "sampled", "experiment_uid": "samplers", "seed": seed,
        "schedule": [{"training": {
            "environments": [{"environment": {
                "name": "lineage_components:ParamEnvironment", "uid": "p",
                "params": {"length": 3, "sensors": 1, "actuators": 1, "discrete": True, **params}}}],
            "agents": [{"name": "a", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "train", "worker": worker, "episodes": episodes}}}],
    }


SAMPLERS = {"gravity": {"sampler": "uniform", "min": 9.0, "max": 10.0},
            "wind": {"sampler": "multirange_uniform", "intervals": [[-2, -1], [1, 2]]}}


def drawn(store, instance_id):
    return {(e["worker"], e["episode"]): e["extras"]["env_params"]["p"]
            for e in store.runs.episodes(instance_id=instance_id)}


def test_samplers_are_drawn_per_episode_and_stored(store, tmp_path):
    result = run(sampled_doc(SAMPLERS), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    values = drawn(store, result.instance_id)
    assert sorted(values) == [(w, e) for w in range(2) for e in range(5)]
    for v in values.values():
        assert set(v) == {"gravity", "wind"}
        assert 9.0 <= v["gravity"] < 10.0
        assert -2 <= v["wind"] <= -1 or 1 <= v["wind"] <= 2
    assert len({v["gravity"] for v in values.values()}) == 10  # afresh each episode and worker
    # reproducible: the same document draws the same values; another seed others
    again = run(sampled_doc(SAMPLERS), store=store, results=tmp_path / "r", rerun=True)
    assert drawn(store, again.instance_id) == values
    other = run(sampled_doc(SAMPLERS, seed=5), store=store, results=tmp_path / "r")
    assert drawn(store, other.instance_id) != values


def test_gaussian_sampler_and_plain_params_together(store, tmp_path):
    result = run(sampled_doc({"gravity": {"sampler": "gaussian", "mean": 9.81, "std": 0.0}, "wind": 0.5},
                             worker=1, episodes=3), store=store, results=tmp_path / "r")
    assert result.ok, result.traceback
    assert list(drawn(store, result.instance_id).values()) == [{"gravity": 9.81}] * 3


def test_environment_without_samplers_stores_no_env_params(store, tmp_path):
    result = run(sampled_doc({"gravity": 9.0}, worker=1, episodes=2), store=store, results=tmp_path / "r")
    assert result.ok
    assert all(not (e["extras"] or {}).get("env_params") for e in store.runs.episodes(instance_id=result.instance_id))


def test_malformed_sampler_is_a_document_error_with_its_key(store, tmp_path):
    with pytest.raises(DocumentError) as info:
        run(sampled_doc({"gravity": {"sampler": "uniform", "min": 3, "max": 1}}), store=store,
            results=tmp_path / "r")
    assert "gravity" in str(info.value) and "min" in str(info.value)
    assert "environments" in str(info.value)
