"""xdoe.tree.grow / xrun grow: deaths, recovery, goal, limits, and a SIGKILL in the middle."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import hold
import pytest
from click.testing import CliRunner

from treebuilders import HERE, level_document
from xdoe.cli._xrun import main
from xdoe.documents import dump_canonical
from xdoe.store import Store
from xdoe.tree import grow

#: root level 1; continuing changes nothing (dead), level 0.5 is worse (dead),
#: x2 recovers; the goal (objective 12 = level 4 x 3 steps) two recoveries later.
EXPECTED = [("lv", "healthy"), ("lv_b01", "dead"), ("lv_b02", "dead"), ("lv_b03", "healthy"),
            ("lv_b03_b01", "dead"), ("lv_b03_b02", "dead"), ("lv_b03_b03", "goal")]


def write_config(tmp_path: Path, *, max_sessions: int = 20, parallel: int = 1) -> Path:
    config = {
        "uid": "lv-tree",
        "output": str(tmp_path / "runs"),
        "segment": {"episodes": 3},
        "goal": {"threshold": 12, "last": 2},
        "criterion": {"name": "ImprovementCriterion", "params": {"last": 2}},
        "directions": [{"environment.params.level": 0.5}, {"environment.params.level": "x2"}],
        "limits": {"max_sessions": max_sessions, "max_depth": 5, "max_parallel": parallel},
        "root": level_document("lv"),
    }
    path = tmp_path / "session.yaml"
    path.write_text(dump_canonical(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("parallel", [1, pytest.param(2, id="parallel")])
def test_grow_dies_recovers_and_reaches_the_goal(store_url: str, tmp_path: Path, parallel: int) -> None:
    lines: list[str] = []
    result = grow(write_config(tmp_path, parallel=parallel), store=store_url,
                  results=tmp_path / "results", report=lines.append)
    assert result.status == "goal"
    got = [(n.run_uid, n.health) for n in result.nodes]
    if parallel == 1:
        assert got == EXPECTED
    else:  # rounds of two: the x2 direction is planned together with the 0.5 one
        assert ("lv_b01", "dead") in got and got[-1][1] == "goal"
    assert [n.run_uid for n in result.best][-1] == got[-1][0]
    assert any("dead" in line for line in lines)
    again = grow(write_config(tmp_path, parallel=parallel), store=store_url, results=tmp_path / "results")
    assert again.status == "goal" and again.ran == 0 and len(again.nodes) == len(result.nodes)


def test_limits_and_changed_config(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    result = grow(write_config(tmp_path, max_sessions=3), store=url, results=tmp_path / "results")
    assert result.status == "max_sessions" and len(result.nodes) == 3
    assert [n.run_uid for n in result.best] == ["lv"]
    # raising a limit continues the same tree
    more = grow(write_config(tmp_path, max_sessions=20), store=url, results=tmp_path / "results")
    assert [(n.run_uid, n.health) for n in more.nodes] == EXPECTED and more.ran == 4
    changed = write_config(tmp_path)
    changed.write_text(changed.read_text().replace("x2", "x3"))
    from xdoe.errors import InputError

    with pytest.raises(InputError, match="exists in store .* with another root"):
        grow(changed, store=url)


def test_cli_grow_bad_config_is_one_line(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace("environment.params.level: 0.5", "environment.params.levl: 0.5"))
    result = CliRunner().invoke(main, ["grow", str(path), "--store", f"sqlite:///{tmp_path / 'x.sqlite'}"])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "session.yaml:" in result.output and "did you mean" in result.output
    assert not (tmp_path / "runs").exists()


def test_cli_grow_with_an_unusable_store_is_exit_2(tmp_path: Path) -> None:
    """Unusable store = unusable input, as in every other xrun command (it was exit 1)."""
    path = write_config(tmp_path)
    (tmp_path / "bad.sqlite").write_bytes(b"not a database")
    result = CliRunner().invoke(main, ["grow", str(path), "--store", f"sqlite:///{tmp_path / 'bad.sqlite'}"])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "cannot open store" in result.output
    assert (tmp_path / "bad.sqlite").read_bytes() == b"not a database"
    assert not (tmp_path / "runs").exists()


def _nodes(url: str) -> list:
    with Store(url) as store:
        return store.sessions.session_nodes("lv-tree")


@pytest.mark.slow
def test_sigkill_and_restart_continue_the_same_tree(tmp_path: Path) -> None:
    """Killed where :mod:`hold` holds it: in the 4th session (3 training and
    2 testing episodes each), at its second episode start."""
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    config = write_config(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "xdoe.cli._xrun", "grow", str(config), "--store", url,
               "--results", str(tmp_path / "results"), "--quiet"]
    hold.request(tmp_path / "hold", 3 * 5 + 2)
    proc = subprocess.Popen(command, env={**env, hold.HOLD: str(tmp_path / "hold")}, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert hold.wait_held(proc, tmp_path / "hold"), f"grow ended before its hold: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    killed = _nodes(url)
    assert len(killed) == 4 and killed[3].health == "running" and killed[3].instance_status is None
    with Store(url) as store:  # in the middle of the 4th session: its first episode stored
        (running,) = store.runs.instances("running", run_uid=killed[3].run_uid)
        assert len(list(store.runs.episodes(instance_id=running.id))) == 1
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    nodes = _nodes(url)
    assert [(n.run_uid, n.health) for n in nodes] == EXPECTED
    with Store(url) as store:
        for node in nodes:  # nothing ran twice: one instance per session, each episode once
            instances = store.runs.instances(run_uid=node.run_uid)
            assert [i.status for i in instances] == ["finished"], node.run_uid
            rows = [(r["phase"], r["worker"], r["episode"]) for r in store.runs.episodes(instance_id=instances[0].id)]
            assert len(rows) == len(set(rows)) == 3 + 2, node.run_uid
        assert nodes[3].instance_id == store.runs.instances(run_uid=nodes[3].run_uid)[0].id


def test_root_from_an_experiment_document(tmp_path: Path) -> None:
    from xdoe.documents import load_yaml

    data = load_yaml(Path(__file__).parents[2] / "experiments" / "taxi.yaml").data
    data.update(repetitions=1, factors={"alpha": {"levels": [0.5]}})
    data["definitions"]["phase_config"] = {"train": {"mode": "train", "worker": 1, "episodes": 3},
                                           "test": {"mode": "test", "worker": 1, "episodes": 2}}
    data["definitions"]["environments"]["taxi"]["environment"]["params"]["max_episode_steps"] = 10
    data["schedule"][0]["training"]["agents"] = [["learner"]]
    (tmp_path / "exp.yaml").write_text(dump_canonical(data), encoding="utf-8")
    (tmp_path / "grow.yaml").write_text(
        f"root: exp.yaml\noutput: {tmp_path / 'runs'}\nlimits: {{max_sessions: 2}}\nsegment: {{episodes: 2}}\n")
    result = grow(tmp_path / "grow.yaml", store=f"sqlite:///{tmp_path / 'x.sqlite'}",
                  results=tmp_path / "results")
    assert result.tree == "taxi-study-0000" and result.status == "max_sessions"
    assert [n.run_uid for n in result.nodes] == ["taxi-study-0000", "taxi-study-0000_b01"]
    assert (tmp_path / "runs" / "run-taxi-study-0000.yaml").is_file()
    data["repetitions"] = 2
    (tmp_path / "exp.yaml").write_text(dump_canonical(data), encoding="utf-8")
    from xdoe.errors import DocumentError

    with pytest.raises(DocumentError, match=r"grow.yaml:1.*expands into 2 runs"):
        grow(tmp_path / "grow.yaml", store=f"sqlite:///{tmp_path / 'y.sqlite'}")
