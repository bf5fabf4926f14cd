"""``laydown.svg`` drawn once per run structure (issue 16): the cache key,
the shared drawing, the copy fallback, and no file left behind on failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xdoe.analysis._laydown import CACHE_FOLDER, LAYDOWN_FILE, laydown_key, write_laydown


def _run(uid: str = "r-0", seed: int = 1, env_class: str = "DummyEnvironment", episodes: int = 2) -> dict:
    return {
        "uid": uid, "seed": seed, "design_point": {"index": 0},
        "schedule": [{"training": {
            "environments": [{"environment": {"name": f"xdoe.environments:{env_class}", "uid": "env",
                                              "params": {"length": 3}}}],
            "agents": [{"name": "learner", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"},
                        "sensors": ["env.s0"], "actuators": ["env.a0"]}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "train", "episodes": episodes}}}],
    }


def test_key_is_the_drawn_structure_only() -> None:
    assert laydown_key(_run("a", 1)) == laydown_key(_run("b", 7))  # uid, seed, design point: not drawn
    assert laydown_key(_run()) != laydown_key(_run(env_class="OtherEnvironment"))
    assert laydown_key(_run()) != laydown_key(_run(episodes=3))  # the panel title shows the episodes
    assert len(laydown_key(_run())) == 64


def test_drawn_once_and_linked_into_each_folder(tmp_path: Path) -> None:
    folders = [tmp_path / f"r-{k}" / "2026-01-01_00-00-00" for k in range(3)]
    for k, folder in enumerate(folders):
        folder.mkdir(parents=True)
        assert write_laydown(_run(f"r-{k}", k), folder, tmp_path) == folder / LAYDOWN_FILE
    drawn = list((tmp_path / CACHE_FOLDER).iterdir())
    assert [d.name for d in drawn] == [f"{laydown_key(_run())}.svg"]  # no scratch file left
    text = drawn[0].read_text("utf-8")
    assert "agent learner" in text and "environment env" in text and "sensors: s0" in text
    assert all((f / LAYDOWN_FILE).samefile(drawn[0]) for f in folders)
    assert drawn[0].stat().st_mode & 0o777 == 0o444  # shared by hard links: read-only
    # a structure drawn before is not drawn again: the cached file is taken as it is
    stamp = drawn[0].stat().st_mtime_ns
    other = tmp_path / "r-9" / "x"
    other.mkdir(parents=True)
    write_laydown(_run("r-9"), other)  # default cache root: the folder's grandparent
    assert drawn[0].stat().st_mtime_ns == stamp and (other / LAYDOWN_FILE).samefile(drawn[0])


def test_key_without_the_drawing_code_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    # an install with compiled modules only: the version stands for the code, the key stays stable
    real = Path.read_bytes

    def no_sources(self: Path) -> bytes:
        if self.suffix == ".py":
            raise FileNotFoundError(self)
        return real(self)

    before = laydown_key(_run())
    monkeypatch.setattr(Path, "read_bytes", no_sources)
    key = laydown_key(_run())
    assert key == laydown_key(_run("b", 7)) and key != before and len(key) == 64


def test_copy_where_no_hard_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(*_: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    folder = tmp_path / "r" / "i"
    folder.mkdir(parents=True)
    target = write_laydown(_run(), folder)
    assert target is not None and target.stat().st_nlink == 1
    assert target.read_bytes() == (tmp_path / CACHE_FOLDER / f"{laydown_key(_run())}.svg").read_bytes()


def test_a_failed_drawing_leaves_nothing_and_warns(tmp_path: Path) -> None:
    folder = tmp_path / "r" / "i"
    folder.mkdir(parents=True)
    (tmp_path / CACHE_FOLDER).write_text("a file where the cache folder goes")
    with pytest.warns(RuntimeWarning, match="lay-down diagram not written"):
        assert write_laydown(_run(), folder) is None
    assert list(folder.iterdir()) == []
