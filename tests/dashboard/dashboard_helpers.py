"""Shared pieces of the dashboard tests: run documents, a free port, the
``xrun dashboard`` server in a subprocess, headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: the marks of a module of browser tests (``pytestmark = BROWSER_MARKS``): slow, and skipped without Chromium
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium chromium-driver)"),
]


def taxi_run(uid: str, experiment: str, episodes: int, *, alpha: float = 0.5,
             test_episodes: int = 5) -> dict[str, Any]:
    """A Q-learning run on Taxi-v4 (30-step episodes): training then a short test."""

    def phase(mode: str, n: int) -> dict[str, Any]:
        return {
            "environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment",
                                              "uid": "taxi",
                                              "params": {"env_id": "Taxi-v4", "max_episode_steps": 30}}}],
            "agents": [{"name": "learner",
                        "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": alpha}},
                        "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
                        "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
            "phase_config": {"mode": mode, "worker": 1, "episodes": n},
        }

    return {"uid": uid, "experiment_uid": experiment, "seed": 7,
            "design_point": {"index": int(uid[-1]), "repetition": 0, "levels": {"alpha": alpha}},
            "schedule": [{"training": phase("train", episodes)}, {"testing": phase("test", test_episodes)}]}


def tictactoe_run(uid: str, experiment: str, episodes: int, *, test_episodes: int = 5) -> dict[str, Any]:
    """A two-agent run (``experiments/tictactoe.yaml``): a Q-learner (``learner``)
    against a random player (``random``), taking turns; training then a test."""

    def phase(mode: str, n: int) -> dict[str, Any]:
        def agent(name: str, brain: str, muscle: str, params: dict[str, Any], mark: str) -> dict[str, Any]:
            return {"name": name, "brain": {"name": brain, "params": {}},
                    "muscle": {"name": muscle, "params": params},
                    "objective": {"name": "xdoe.agents:RewardObjective", "params": {"reward_ids": [f"ttt.reward_{mark}"]}},
                    "sensors": ["ttt.board"], "actuators": [f"ttt.move_{mark}"]}

        return {
            "environments": [{"environment": {"name": "xdoe.environments:TicTacToeEnvironment", "uid": "ttt",
                                              "params": {}}}],
            "agents": [agent("learner", "xdoe.agents:QLearningBrain", "xdoe.agents:QLearningMuscle",
                             {"epsilon": 0.2}, "x"),
                       agent("random", "xdoe.agents:DummyBrain", "xdoe.agents:DummyMuscle", {}, "o")],
            "simulation": {"name": "xdoe.simulation:TakingTurnsSimController",
                           "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition", "params": {}}]},
            "phase_config": {"mode": mode, "worker": 1, "episodes": n},
        }

    return {"uid": uid, "experiment_uid": experiment, "seed": 9,
            "design_point": {"index": int(uid[-1]), "repetition": 0, "levels": {}},
            "schedule": [{"training": phase("train", episodes)}, {"testing": phase("test", test_episodes)}]}


def write_runs(folder: Path, docs: list[dict[str, Any]]) -> list[Path]:
    """Each document as ``run-<uid>.yaml`` (JSON is YAML)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for doc in docs:
        path = folder / f"run-{doc['uid']}.yaml"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        paths.append(path)
    return paths


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = dict(os.environ)
    out["PYTHONPATH"] = src + (os.pathsep + out["PYTHONPATH"] if out.get("PYTHONPATH") else "")
    return out


class Dashboard:
    """``xrun dashboard`` in a subprocess on a free port; ``url`` carries the token."""

    def __init__(self, workdir: Path, store: str, *extra: str, store_file: bool = False) -> None:
        self.port = free_port()
        self.log = open(workdir / "dashboard.log", "w+")
        if store_file:  # the URL in a file: never on the command line (ps)
            (workdir / "store.url").write_text(store + "\n", encoding="utf-8")
            where = ["--store-file", "store.url"]
        else:
            where = ["--store", store]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "xdoe.cli._xrun", "dashboard", *where,
             "--port", str(self.port), *extra],
            cwd=workdir, env=env(), stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.process.stdout is not None
        self.url = ""
        for _ in range(5):  # "note: no store yet ...", "xrun dashboard of ...", "open URL"
            line = self.process.stdout.readline()
            if line.startswith("open "):
                self.url = line.split()[1]
                break
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.base + "/static/favicon.svg", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    self.log.seek(0)
                    raise RuntimeError(f"dashboard did not start: {self.log.read()}")
                time.sleep(0.2)
        self.token = self.url.split("token=", 1)[1] if "token=" in self.url else None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.25) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(interval)


def client(settings: Any, *, token: bool = True, origin: bool = True) -> Any:
    """A FastAPI TestClient of the dashboard for ``settings``, addressed as a
    browser on the same machine does (``http://127.0.0.1:PORT``), sending
    the token (header) and the dashboard's own Origin unless told not to."""
    from fastapi.testclient import TestClient

    from xdoe.dashboard import create_app

    base = f"http://127.0.0.1:{settings.port}"
    c = TestClient(create_app(settings), base_url=base)
    if token:
        c.headers["X-Xdoe-Token"] = settings.token
    if origin:
        c.headers["Origin"] = base
    return c
