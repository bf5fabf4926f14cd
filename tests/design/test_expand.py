"""Expansion of design points into run documents."""

import copy
from pathlib import Path

import numpy as np
import pytest

from xdoe.design.runfiles import generate, run_seed
from xdoe.documents import parse_run_document
from xdoe.errors import DocumentError

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def _doc(**extra):
    comp = lambda n: {"name": f"pkg:{n}", "params": {}}  # noqa: E731
    doc = {
        "uid": "exp",
        "seed": 3,
        "definitions": {
            "environments": {
                "e1": {"environment": {"name": "pkg:E", "uid": "u1", "params": {"p": "${alpha}"}},
                       "reward": {"name": "pkg:R", "params": {"k": "r-${alpha}"}}, "state_transformer": {"name": ""}},
                "e2": {"environment": {"name": "pkg:E", "uid": "u2"}},
            },
            "agents": {
                "a": {"name": "alice", "brain": comp("B"), "muscle": comp("M"), "objective": comp("O"),
                      "load": {"test": {"agent": "alice", "experiment_run": "r", "phase": 0}}},
                "b": {"brain": comp("B"), "muscle": comp("M"), "objective": comp("O"), "replay": [1]},
            },
            "sensors": {"s1": {"u1": [0, "u1.x"], "u2": ["y"]}, "s2": {"u2": ["u2.z"]}},
            "actuators": {"act": {"u1": ["go"]}},
            "simulation": {"sim": {"name": "pkg:Sim", "conditions": [{"name": "pkg:C", "params": {"n": "${n}"}}]}},
            "phase_config": {"tr": {"mode": "train", "episodes": "${n}", "checkpoint_every": 2}, "te": {"mode": "test"}},
            "run_config": {"condition": {"name": "pkg:Stop", "params": {}}},
        },
        "factors": {"alpha": {"levels": [0.5, 0.25]}, "n": {"levels": [3]}},
        "schedule": [
            {"train": {"environments": [["e1", "e2"]], "agents": [["a", "b"]],
                       "sensors": {"a": ["s1", "s2"], "b": ["s2"]}, "actuators": {"a": ["act"]},
                       "simulation": ["sim"], "phase_config": ["tr"]}},
            {"test": {"agents": [["$req(phase=0, index=1)", "$req($prev, index=0)"]],
                      "sensors": {"b": ["$req($prev)"]}, "phase_config": ["te"]}},
            {"again": {"environments": ["$req(phase=train, index=1)"], "agents": ["$req($prev)"]}},
        ],
    }
    doc.update(extra)
    return doc


def test_expansion_resolves_everything() -> None:
    runs, design = generate(_doc())
    assert [f.name for f in design.factors] == ["0.sensors.a", "alpha"]
    assert len(runs) == 4
    doc = runs[3]
    assert doc["design_point"]["levels"] == design.values(3) == {"0.sensors.a": "s2", "alpha": 0.25}
    train, test, again = (next(iter(p.values())) for p in doc["schedule"])
    env1 = train["environments"][0]
    assert env1["environment"] == {"name": "pkg:E", "uid": "u1", "params": {"p": 0.25}}  # typed value
    assert env1["reward"] == {"name": "pkg:R", "params": {"k": "r-0.25"}}  # interpolated
    assert env1["state_transformer"] is None and train["environments"][1]["reward"] is None
    alice, b = train["agents"]
    assert alice["name"] == "alice" and b["name"] == "b"
    assert alice["sensors"] == ["u2.z"] and b["sensors"] == ["u2.z"]
    assert alice["actuators"] == ["u1.go"] and b["actuators"] is None
    assert alice["load"] is None and b["replay"] == [1]  # load keyed by phase name: none for "train"
    assert train["phase_config"] == {"mode": "train", "episodes": 3, "checkpoint_every": 2}
    assert train["simulation"]["conditions"] == [{"name": "pkg:C", "params": {"n": 3}}]
    # phase 1: agents picked from phase 0 by index, sensors of b from $prev, a inherited
    assert [a["name"] for a in test["agents"]] == ["b", "alice"]
    assert test["agents"][1]["load"] == {"agent": "alice", "experiment_run": "r", "phase": 0}
    assert test["environments"] == train["environments"] and test["simulation"] == train["simulation"]
    assert test["phase_config"] == {"mode": "test"}
    # phase 2: only e2 (index 1 of phase "train"); agents as in phase 1; the ids of u1 drop out
    assert [e["environment"]["uid"] for e in again["environments"]] == ["u2"]
    assert [a["name"] for a in again["agents"]] == ["b", "alice"]
    assert again["agents"][1]["actuators"] == []
    assert doc["run_config"] == {"condition": {"name": "pkg:Stop", "params": {}}}
    parse_run_document(doc)  # a valid run document


def test_bare_and_full_ids() -> None:
    runs, _ = generate(_doc())
    train = runs[0]["schedule"][0]["train"]
    assert train["agents"][0]["sensors"] == ["u1.0", "u1.x", "u2.y"]


def test_documents_are_fresh_objects() -> None:
    runs, _ = generate(_doc())
    first = runs[0]
    first["schedule"][0]["train"]["environments"][0]["environment"]["params"]["p"] = "changed"
    assert runs[0]["schedule"][0]["train"]["environments"][0]["environment"]["params"]["p"] == 0.5


def test_examples_expand_into_valid_run_documents() -> None:
    for name in ("dummy.yaml", "arsenai-style.yaml"):
        with pytest.warns(UserWarning) if name == "arsenai-style.yaml" else _nothing():
            runs, _ = generate(EXPERIMENTS / name)
        for doc in runs:
            model, _ = parse_run_document(copy.deepcopy(doc))
            for phase in model.schedule:
                for agent in phase.agents:
                    uids = {e.environment.uid for e in phase.environments}
                    for sid in (agent.sensors or []) + (agent.actuators or []):
                        assert sid.split(".", 1)[0] in uids


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_seed_follows_architecture_contract() -> None:
    levels = {"0.sensors.a": "s1", "alpha": 0.5}
    runs, _ = generate(_doc())
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(levels, sort_keys=True, separators=(",", ":")).encode()).digest()
    ss = np.random.SeedSequence(3, spawn_key=(1, int.from_bytes(digest[:4], "big"), int.from_bytes(digest[4:8], "big"), 0))
    assert runs[0]["seed"] == int(ss.generate_state(1, np.uint32)[0]) == run_seed(3, levels, 0)


def test_seeds_do_not_depend_on_repetitions_or_other_levels() -> None:
    runs1, d1 = generate(_doc())
    runs3, _ = generate(_doc(repetitions=3))
    assert [runs3[k] for k in range(4)] == list(runs1)
    wider = _doc()
    wider["factors"]["alpha"]["levels"].append(0.125)
    runs_w, d_w = generate(wider)
    by_levels = {str(r["design_point"]["levels"]): r["seed"] for r in runs_w}
    for run in runs1:
        assert by_levels[str(run["design_point"]["levels"])] == run["seed"]
    assert len({r["seed"] for r in runs3}) == 12


def test_no_global_random_state_is_read() -> None:
    import random

    np.random.seed(1)
    a = list(generate(_doc()).runs)
    np.random.seed(2)
    random.seed(5)
    b = list(generate(_doc()).runs)
    assert a == b


def test_continuous_factor_values_are_rounded_and_in_range() -> None:
    doc = _doc(max_runs=5)
    doc["factors"]["alpha"] = {"range": [0.001, 1.0], "scale": "log"}
    runs, design = generate(doc)
    assert design.method == "maximin" and len(runs) == 5
    for run in runs:
        value = run["design_point"]["levels"]["alpha"]
        assert 0.001 <= value <= 1.0
        assert value == float(f"{value:.12g}")
        assert run["schedule"][0]["train"]["environments"][0]["environment"]["params"]["p"] == value


def test_index_out_of_range_depends_on_the_design_point() -> None:
    doc = _doc()
    doc["schedule"][0]["train"]["agents"] = [["a", "b"], ["a"]]
    runs, design = generate(doc)
    bad = [k for k in range(len(runs)) if design.values(k)["0.agents"] == ["a"]]
    assert bad
    with pytest.raises(DocumentError, match=r"index 1 out of range: phase 0 \('train'\) chose 1 agents"):
        runs[bad[0]]


def test_set_for_unknown_environment_uid_warns() -> None:
    doc = _doc()
    doc["definitions"]["sensors"]["nowhere"] = {"zz": [1]}
    with pytest.warns(UserWarning, match="sensor set 'nowhere' names environment uid 'zz'"):
        generate(doc)
