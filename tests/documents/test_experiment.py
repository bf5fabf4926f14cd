import hashlib
import json
from pathlib import Path

import pytest

from xdoe.documents import experiment_schema, load_experiment, safe_uid
from xdoe.errors import DocumentError

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def test_arsenai_document_is_accepted_with_one_warning() -> None:
    exp = load_experiment(EXPERIMENTS / "arsenai-style.yaml")
    assert exp.model.version == "3.4.1"
    assert [v.name for v in exp.factors] == ["0.environments", "0.phase_config", "0.sensors.attacker"]
    assert len(exp.warnings) == 1
    assert "arsenai-style.yaml:115:" in exp.warnings[0] and "closing parenthesis" in exp.warnings[0]
    # anchors and aliases are resolved into plain data
    agents = exp.data["definitions"]["agents"]
    assert agents["defender"]["muscle"] == agents["attacker"]["muscle"]
    assert len(exp.input_sha256) == 64


def test_schedule_and_named_variables() -> None:
    exp = load_experiment(EXPERIMENTS / "dummy.yaml")
    names = [v.name for v in exp.variables]
    assert names[:4] == ["0.environments", "0.agents", "0.simulation", "0.phase_config"]
    assert "0.sensors.random" in names and "1.phase_config" in names and names[-1] == "length"
    assert [v.name for v in exp.factors] == ["0.environments", "0.sensors.random", "length"]
    assert exp.phases[1].entries["environments"] is None  # inherited


def _doc(**extra):
    doc = {
        "id": "Dummy Experiment",  # arsenAI's key, unsafe characters
        "definitions": {
            "environments": {"e": {"environment": {"name": "m:E", "uid": "u", "params": {"x": "${x}", "t": "v${x}"}}}},
            "agents": {"a": {"brain": {"name": "m:B"}, "muscle": {"name": "m:M"}, "objective": {"name": "m:O"}}},
            "simulation": {"s": {"name": "m:S"}},
            "phase_config": {"p": {"mode": "train", "episodes": 2}},
        },
        "factors": {"x": {"levels": [1, 2]}},
        "schedule": [{"only": {"environments": [["e"]], "agents": [["a"]], "simulation": "s", "phase_config": ["p"]}}],
    }
    doc.update(extra)
    return doc


def test_plain_data_document_and_id_alias() -> None:
    exp = load_experiment(_doc(extra_key=1))
    assert exp.uid == "Dummy Experiment" and exp.safe_uid == "Dummy_Experiment"
    assert any("unknown key 'extra_key'" in w for w in exp.warnings)
    assert any("unsafe in file names" in w for w in exp.warnings)
    with pytest.raises(DocumentError, match="unknown key 'extra_key'"):
        load_experiment(_doc(extra_key=1), strict=True)


def test_unused_factor_warns() -> None:
    exp = load_experiment(_doc(factors={"x": {"levels": [1, 2]}, "unused": {"levels": [3]}}))
    assert any("factor 'unused' is not used" in w for w in exp.warnings)


def test_list_levels_cannot_be_interpolated() -> None:
    with pytest.raises(DocumentError, match="cannot be interpolated"):
        load_experiment(_doc(factors={"x": {"levels": [[1], [2]]}}))


def test_integer_range_without_integers() -> None:
    with pytest.raises(DocumentError, match="holds no integer"):
        load_experiment(_doc(factors={"x": {"range": [0.2, 0.8], "integer": True}}, max_runs=3))


def test_placeholder_outside_definitions() -> None:
    with pytest.raises(DocumentError, match="only allowed inside definitions"):
        load_experiment(_doc(output="${x}"))


def test_safe_uid() -> None:
    # a uid of the file-safe alphabet names its files as it always did (spaces as _) ...
    assert safe_uid("Dummy Experiment") == "Dummy_Experiment"
    assert safe_uid("taxi-study_1.2") == "taxi-study_1.2"
    # ... any other by a slug and a short hash of the uid, stable across versions
    assert safe_uid("a b:c") == "a_b_c-" + hashlib.sha256(b"a b:c").hexdigest()[:10]
    assert safe_uid("Études") == "Etudes-" + hashlib.sha256("Études".encode()).hexdigest()[:10]


def test_schema_is_json_and_names_the_keys() -> None:
    schema = experiment_schema()
    json.dumps(schema)
    assert {"uid", "seed", "factors", "definitions", "schedule", "design"} <= set(schema["properties"])
    assert "definitions" in schema["required"]
