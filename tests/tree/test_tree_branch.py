"""xdoe.tree.branch and xrun branch / xrun tree on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from treebuilders import level_document
from xdoe.cli._xrun import main
from xdoe.errors import InputError
from xdoe.execution import run
from xdoe.store import Store
from xdoe.tree import branch


@pytest.fixture
def parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store holding one finished run ``lv`` (level 1: objective 3 per episode)."""
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    assert run(level_document("lv"), store=url, results=tmp_path / "results").status == "finished"
    return url


def test_branch_writes_loads_runs_and_records(parent: str, tmp_path: Path) -> None:
    out = branch("lv", set=["environment.params.level=x2", "brain.params.alpha=0.3"], episodes=4,
                 store=parent, output=tmp_path / "runs", results=tmp_path / "results")
    assert out.file == tmp_path / "runs" / "branches" / "run-lv_b01.yaml" and out.file.is_file()
    doc = out.document
    assert "experiment_uid" not in doc and "design_point" not in doc  # a session, not a design run
    assert doc["session"] == {"tree": "lv", "parent": "lv", "parent_hash": doc["session"]["parent_hash"],
                              "overrides": {"environment.params.level": 2.0, "brain.params.alpha": 0.3},
                              "experiment": "lv"}  # provenance: the experiment the root belongs to
    train = doc["schedule"][0]["training"]
    assert train["phase_config"]["episodes"] == 4
    assert train["agents"][0]["load"] == {"agent": "learner", "experiment_run": "lv"}
    assert train["agents"][0]["brain"]["params"]["alpha"] == 0.3
    assert [next(iter(p.values()))["environments"][0]["environment"]["params"]["level"]
            for p in doc["schedule"]] == [2.0, 2.0]
    assert doc["seed"] != 7
    assert out.result is not None and out.result.status == "finished"
    assert out.assessment is not None and out.assessment.healthy and out.assessment.metric == pytest.approx(6.0)
    with pytest.warns(DeprecationWarning, match="now BranchResult.assessment"):
        assert out.verdict is out.assessment  # the old name (issue 23.7)
    with Store(parent) as store:
        nodes = store.sessions.session_nodes()
        assert [(n.run_uid, n.health, n.parent_id) for n in nodes] == [
            ("lv", "healthy", None), ("lv_b01", "healthy", nodes[0].id)]
        assert [o["key"] for o in nodes[1].overrides] == ["environment.params.level", "brain.params.alpha"]
        agents = [a for r in store.views.build_lineage(run="lv_b01") for i in r.instances
                  for p in i.phases for a in p.agents if p.index == 0]
        assert agents[0].kind == "checkpoint" and agents[0].source_run == "lv"
    # a second branch from the child's training phase, only written
    second = branch("lv_b01:training", run=False, store=parent)  # into the parent's folder
    assert second.file.name == "run-lv_b01_b01.yaml" and second.result is None
    assert second.document["schedule"][0]["training"]["agents"][0]["load"]["phase"] == "training"
    assert second.document["session"]["parent"] == "lv_b01" and second.document["session"]["phase"] == "training"
    assert second.document["session"]["experiment"] == "lv"  # the provenance passes down the tree
    assert sorted(p.name for p in (tmp_path / "runs" / "branches").iterdir()) == [
        "run-lv_b01.yaml", "run-lv_b01_b01.yaml"]  # sorted under their parents
    with Store(parent) as store:
        assert store.sessions.session_nodes()[-1].health == "pending"


def test_branch_errors_write_nothing(parent: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unknown key 'brain.params.alfa'.*did you mean"):
        branch("lv", set=["brain.params.alfa=1"], store=parent, output=tmp_path / "runs")
    with pytest.raises(InputError, match="did you mean: lv"):
        branch("lvv", store=parent, output=tmp_path / "runs")
    with pytest.raises(InputError, match="no phase 'train'; its phases: training, testing"):
        branch("lv:train", store=parent, output=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_cli_branch_and_tree(parent: str, tmp_path: Path) -> None:
    cli = CliRunner()
    bad = cli.invoke(main, ["branch", "lv", "--store", parent, "--set", "brain.params.alfa=1"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "did you mean" in bad.output
    assert not list(tmp_path.glob("_outputs/run-*.yaml"))
    ok = cli.invoke(main, ["branch", "lv", "--store", parent, "--set", "environment.params.level=0.5",
                           "--episodes", "2", "--results", str(tmp_path / "results")])
    assert ok.exit_code == 0, ok.output
    assert "wrote _outputs/branches/run-lv_b01.yaml" in ok.output and "finished" in ok.output
    text = cli.invoke(main, ["tree", "--store", parent])
    assert text.exit_code == 0
    assert "lv_b01" in text.output and "dead" in text.output and "environment.params.level=0.5" in text.output
    data = json.loads(cli.invoke(main, ["tree", "--store", parent, "--format", "json"]).output)
    assert [n["health"] for n in data["trees"][0]["nodes"]] == ["healthy", "dead"]
    dot = cli.invoke(main, ["tree", "--store", parent, "--format", "dot"]).output
    assert dot.startswith("digraph sessions {") and "->" in dot
    path = cli.invoke(main, ["tree", "lv_b01", "--store", parent, "--format", "json"])
    assert [n["run"] for n in json.loads(path.output)["trees"][0]["nodes"]] == ["lv", "lv_b01"]
    one = cli.invoke(main, ["tree", "--store", parent, "--tree", "lv", "--format", "json"])
    assert [t["uid"] for t in json.loads(one.output)["trees"]] == ["lv"]
    unknown = cli.invoke(main, ["tree", "--store", parent, "--tree", "lw"])
    assert unknown.exit_code == 2 and "no session tree 'lw'; trees: lv" in unknown.output
    missing = cli.invoke(main, ["tree", "lv_b9", "--store", parent])
    assert missing.exit_code == 2 and "did you mean" in missing.output
    lineage = cli.invoke(main, ["tree", "--store", parent, "--lineage"])
    assert lineage.exit_code == 0 and "instance" in lineage.output
    # an output folder in NODE's place, as `xrun status DIR` takes it: its store (it was "no session 'DIR'")
    folder = cli.invoke(main, ["tree", str(tmp_path), "--format", "json"])
    assert folder.exit_code == 0, folder.output
    assert json.loads(folder.output) == data


def test_tree_without_sessions_shows_the_lineage(parent: str, tmp_path: Path) -> None:
    from sqlalchemy import inspect

    from xdoe.store import session_edge, session_node, session_tree

    with Store(parent, create=False) as store:  # as a store written before session trees existed
        for table in (session_edge, session_node, session_tree):
            table.drop(store.database.engine, checkfirst=True)
    result = CliRunner().invoke(main, ["tree", "--store", parent])
    assert result.exit_code == 0 and "run lv" in result.output and "fresh brain" in result.output
    with Store(parent, create=False) as store:  # reading created no session tables
        assert "session_node" not in inspect(store.database.engine).get_table_names()
    for command in (["tree"], ["branch", "lv"]):  # neither creates a store
        missing = CliRunner().invoke(main, [*command, "--store", f"sqlite:///{tmp_path / 'none.sqlite'}"])
        assert missing.exit_code == 2 and "no store at" in missing.output, command
    assert not (tmp_path / "none.sqlite").exists() and not (tmp_path / "_outputs").exists()


def test_training_session_attaches_to_a_node(parent: str, tmp_path: Path) -> None:
    from xdoe import TrainingSession
    from xdoe.components.agents import QLearningBrain
    from xdoe.tree import attach

    brain = QLearningBrain(seed=0, alpha=0.1)
    session = TrainingSession(brain, store=parent, run="lv-own", agent="learner", phase="testing",
                              mode="test", results=tmp_path / "results")
    attachment = attach(session, "lv", overrides={"alpha": 0.1})
    assert brain.table is not None  # the parent's final Q-table was loaded
    from gymnasium.spaces import Discrete

    from xdoe.environment import ActuatorInformation, SensorInformation

    brain.setup([SensorInformation("env.0", Discrete(10), 0)], [ActuatorInformation("env.0", Discrete(10))])
    with session:
        for _ in range(3):
            session.on_episode(5.0, steps=3)  # better than the parent's 3 per episode
    with Store(parent) as store:
        nodes = store.sessions.session_nodes(attachment.tree)
    assert [(n.run_uid, n.health) for n in nodes] == [("lv", "healthy"), ("lv-own", "healthy")]
    assert nodes[1].metric == pytest.approx(5.0) and nodes[1].overrides[0]["key"] == "alpha"


def test_branch_by_steps_and_instance_id(parent: str, tmp_path: Path) -> None:
    with Store(parent) as store:
        instance = store.runs.instances(run_uid="lv")[0].id
    out = branch(str(instance), steps=5, phase="training", run=False, store=parent, output=tmp_path / "runs")
    train = out.document["schedule"][0]["training"]
    assert train["phase_config"]["episodes"] == 5
    assert train["simulation"]["conditions"] == [
        {"name": "xdoe.conditions:EnvironmentTerminationCondition", "params": {}},
        {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": 5}}]
    assert train["agents"][0]["load"] == {"agent": "learner", "experiment_run": "lv"}
    with pytest.raises(InputError, match="not both"):
        branch("lv", steps=5, episodes=2, run=False, store=parent, output=tmp_path / "runs")
    # an older instance than the newest finished one: its checkpoint file by path
    assert run(level_document("lv"), store=parent, results=tmp_path / "results", rerun=True).ok
    old = branch(str(instance), run=True, store=parent, output=tmp_path / "runs",
                 results=tmp_path / "results")
    load = old.document["schedule"][0]["training"]["agents"][0]["load"]
    assert list(load) == ["path"] and Path(load["path"]).is_file()
    assert old.result is not None and old.result.status == "finished"
