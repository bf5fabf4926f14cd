"""Overrides into run documents: exact paths, selectors, suffixes, moves, errors."""

from __future__ import annotations

import pytest

from treebuilders import level_document
from xdoe.errors import InputError
from xdoe.tree import Move, apply_overrides, parse_override, resolve_key


def _complete(doc):
    from xdoe.documents import parse_run_document

    return parse_run_document(doc)[1]


def test_exact_path_and_yaml_values() -> None:
    doc = _complete(level_document())
    out, applied = apply_overrides(doc, ["schedule.0.training.phase_config.episodes=7", "seed=11",
                                         "schedule.training.agents.learner.muscle.params.epsilon=[0.5]"])
    assert out["schedule"][0]["training"]["phase_config"]["episodes"] == 7
    assert out["seed"] == 11
    assert out["schedule"][0]["training"]["agents"][0]["muscle"]["params"]["epsilon"] == [0.5]
    assert applied[0]["paths"] == ["schedule.0.training.phase_config.episodes"]
    assert doc["seed"] == 7  # the input is not changed


def test_suffix_matches_every_phase() -> None:
    doc = _complete(level_document(alpha=0.4))
    out, applied = apply_overrides(doc, ["brain.params.alpha=x0.5"])
    assert applied[0]["paths"] == ["schedule.0.training.agents.0.brain.params.alpha",
                                   "schedule.1.testing.agents.0.brain.params.alpha"]
    assert [next(iter(p.values()))["agents"][0]["brain"]["params"]["alpha"] for p in out["schedule"]] == [0.2, 0.2]
    assert applied[0]["value"] == "x0.5" and applied[0]["result"] == 0.2


def test_moves_keep_integers_and_refuse_non_numbers() -> None:
    doc = _complete(level_document(train=3))
    out, _ = apply_overrides(doc, ["training.phase_config.episodes=x2.5"])
    assert out["schedule"][0]["training"]["phase_config"]["episodes"] == 8
    with pytest.raises(InputError, match="not a number"):
        apply_overrides(doc, ["training.phase_config.mode=x2"])
    assert parse_override("a=x0.5").value == Move(0.5)
    assert parse_override("a=*3").value == Move(3.0)


def test_unknown_key_lists_close_matches_and_add_creates() -> None:
    doc = _complete(level_document())
    with pytest.raises(InputError, match=r"unknown key 'brain.params.alfa'.*did you mean: .*brain\.params\.alpha"):
        resolve_key(doc, "brain.params.alfa")
    out, _ = apply_overrides(doc, ["+training.phase_config.checkpoint_every=5"])
    assert out["schedule"][0]["training"]["phase_config"]["checkpoint_every"] == 5
    with pytest.raises(InputError, match="KEY=VALUE"):
        parse_override("seed")
    with pytest.raises(InputError, match="dotted key"):
        parse_override("a..b=1")
