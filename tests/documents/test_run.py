from pathlib import Path

import pytest

from xdoe.documents import RunDocument, load_run_document, parse_run_document
from xdoe.errors import DocumentError

HAND_WRITTEN = """\
# a palaestrAI-style run document written by hand
uid: hand-0
seed: 7
schedule:
  - train:
      environments:
        - environment: {name: xdoe.environments:DummyEnvironment, uid: env, params: {length: 3}}
          reward: {name: "", params: {}}
      agents:
        - name: a
          brain: {name: xdoe.agents:DummyBrain, params: {}}
          muscle: {name: xdoe.agents:DummyMuscle}
          objective: {name: xdoe.agents:RewardObjective, params: {}}
          sensors: [env.0]
          custom_agent_key: kept
      simulation: {name: xdoe.simulation:VanillaSimController, conditions: []}
      phase_config: {mode: train, worker: 2, episodes: 5, checkpoint_every: 2}
  - test:
      phase_config: {mode: Test}
  - again:
"""


def test_hand_written_document_inherits_omitted_keys(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    path.write_text(HAND_WRITTEN)
    model, data = load_run_document(path)
    assert isinstance(model, RunDocument)
    assert model.phase_names() == ["train", "test", "again"]
    test = model.schedule[1]
    assert test.phase_config.mode == "test"
    assert test.phase_config.episodes == 5 and test.phase_config.worker == 2  # merged key by key
    assert test.phase_config.model_extra == {"checkpoint_every": 2}
    assert test.environments[0].environment.uid == "env"
    assert test.environments[0].reward is None  # empty name means none
    assert test.agents[0].sensors == ["env.0"] and test.agents[0].actuators is None
    assert test.agents[0].muscle.params == {}
    assert test.agents[0].model_extra == {"custom_agent_key": "kept"}
    assert model.schedule[2].phase_config.mode == "test"
    # the plain data has every phase complete, in the file's shape
    assert set(data["schedule"][2]["again"]) == {"environments", "agents", "simulation", "phase_config"}
    assert data["schedule"][0]["train"]["phase_config"]["checkpoint_every"] == 2


def test_uid_defaults_to_file_stem(tmp_path: Path) -> None:
    path = tmp_path / "run-x-0001.yaml"
    path.write_text(HAND_WRITTEN.replace("uid: hand-0\n", ""))
    model, _ = load_run_document(path)
    assert model.uid == "run-x-0001"
    assert model.design_point is None


@pytest.mark.parametrize(
    "old, new, line, fragment",
    [
        ("worker: 2", "worker: 0", 17, "worker: Input should be greater than or equal to 1"),
        ("{mode: Test}", "{mode: eval}", 19, "expected mode 'train' or 'test'"),
        ("      simulation: {name: xdoe.simulation:VanillaSimController, conditions: []}\n", "", 5, "the first phase must give simulation"),
        ("brain: {name: xdoe.agents:DummyBrain, params: {}}", "brain: {params: {}}", 11, "schedule[0].train.agents[0].brain.name: required key missing"),
        ("sensors: [env.0]", "sensors: env.0", 14, "sensors: Input should be a valid list"),
    ],
)
def test_errors_name_file_line_and_key(tmp_path: Path, old: str, new: str, line: int, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    assert old in HAND_WRITTEN
    path.write_text(HAND_WRITTEN.replace(old, new, 1))
    with pytest.raises(DocumentError) as info:
        load_run_document(path)
    assert f"{path}:{line}:" in str(info.value)
    assert fragment in str(info.value)


def test_duplicate_agent_names_refused() -> None:
    agent = {"name": "a", "brain": {"name": "b"}, "muscle": {"name": "m"}, "objective": {"name": "o"}}
    doc = {
        "uid": "x",
        "schedule": [
            {
                "p": {
                    "environments": [{"environment": {"name": "e", "uid": "u"}}],
                    "agents": [agent, agent],
                    "simulation": {"name": "s"},
                    "phase_config": {"mode": "train"},
                }
            }
        ],
    }
    with pytest.raises(DocumentError, match="agent name 'a' appears twice"):
        parse_run_document(doc)
    with pytest.raises(DocumentError, match="must not contain"):
        parse_run_document({**doc, "uid": "../x"})


def test_a_section_that_is_no_mapping_is_reported_without_a_model_class(tmp_path: Path) -> None:
    """pydantic names the model class it expected (``instance of RunAgent``);
    the message names the document's key and what it should be, at either
    stage, whatever the model classes are called."""
    path = tmp_path / "bad.yaml"
    path.write_text(HAND_WRITTEN.replace("brain: {name: xdoe.agents:DummyBrain, params: {}}", "brain: DummyBrain"))
    with pytest.raises(DocumentError) as info:
        load_run_document(path)
    assert str(info.value) == (f"{path}:11: schedule[0].train.agents[0].brain: Input should be a valid dictionary "
                               "(got 'DummyBrain')")
    from xdoe.documents import load_experiment

    experiment = {"uid": "e", "definitions": "all of them", "schedule": [{"train": {}}]}
    with pytest.raises(DocumentError, match=r"definitions: Input should be a valid dictionary \(got 'all of them'\)$"):
        load_experiment(experiment)
