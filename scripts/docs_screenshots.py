"""The dashboard pictures of the docs, generated: ``docs/images/dashboard-run.png``
and ``docs/images/dashboard-tree.png`` (used by ``docs/how-to/dashboard.md``).

Run: ``python scripts/docs_screenshots.py [--chromium /usr/bin/chromium] [--keep DIR]``
(needs the ``dashboard`` extra, gymnasium and playwright; about a minute on one core).

In a temporary folder it runs a small two-agent study (``experiments/tictactoe.yaml``:
a Q-learner against a random player, fewer episodes, its own seed) and a small
session tree (``experiments/taxi-grow.yaml``: shorter segments, at most four
sessions), both into one SQLite store; starts ``xrun dashboard`` on a free
127.0.0.1 port; opens the run page of the first run (one learning curve per
agent and the pooled one) and the session tree (a click on a child session)
in headless Chromium (the server and the launch arguments of the dashboard tests,
``tests/dashboard/dashboard_helpers.py``),
writes the two PNGs, stops the server and prints any console error (exit 1
when there is one). It writes no other file of the repository.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
# the dashboard tests' server (started, waited for, stopped) and Chromium's launch arguments
sys.path.insert(0, str(ROOT / "tests" / "dashboard"))
from dashboard_helpers import CHROMIUM_ARGS, Dashboard

IMAGES = ROOT / "docs" / "images"
RUN = "tictactoe-0000"  # xgen's uid of the study's first run


def _xdoe(work: Path, *args: str) -> None:
    """``xgen`` or ``xrun`` (``args[0]``) of this checkout, in ``work``."""
    tool, *rest = args
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-m", f"xdoe.cli._{tool}", *rest], cwd=work, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def make_store(work: Path) -> str:
    """The study and the tree in ``work``; returns the store URL."""
    url = f"sqlite:///{work / 'xrun.sqlite'}"
    study = yaml.safe_load((ROOT / "experiments" / "tictactoe.yaml").read_text(encoding="utf-8"))
    study["seed"] = 11
    study["factors"] = {"epsilon": {"levels": [0.1]}}  # one run is all the run page needs
    study["definitions"]["phase_config"] = {"train": {"mode": "train", "worker": 1, "episodes": 1500},
                                            "test": {"mode": "test", "worker": 1, "episodes": 150}}
    (work / "tictactoe.yaml").write_text(yaml.safe_dump(study, sort_keys=False), encoding="utf-8")
    _xdoe(work, "xgen", "generate", "tictactoe.yaml")
    _xdoe(work, "xrun", "experiment-start", "--quiet", "--store", url, f"_outputs/run-{RUN}.yaml")
    tree = yaml.safe_load((ROOT / "experiments" / "taxi-grow.yaml").read_text(encoding="utf-8"))
    tree["segment"] = {"episodes": 150}
    tree["limits"] = {"max_sessions": 4, "max_depth": 3, "max_parallel": 1}
    for entry in tree["root"]["schedule"]:
        for name, phase in entry.items():
            phase["phase_config"]["episodes"] = 150 if name == "training" else 50
    tree["criterion"]["params"]["last"] = tree["goal"]["last"] = 50  # the test phase's episodes
    (work / "taxi-grow.yaml").write_text(yaml.safe_dump(tree, sort_keys=False), encoding="utf-8")
    # exit 1: the tree stopped without reaching its goal (a few short sessions do not)
    subprocess.run([sys.executable, "-m", "xdoe.cli._xrun", "grow", "--quiet", "--store", url, "taxi-grow.yaml"],
                   cwd=work, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=False,
                   stdout=subprocess.DEVNULL)
    return url


def _wait(page, expression: str, timeout: float = 30.0) -> None:
    """Poll a JavaScript expression (the pages' Content-Security-Policy forbids ``wait_for_function``)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {expression}")
        time.sleep(0.1)


def shoot(server: Dashboard, chromium: str) -> list[str]:
    """Writes the two pictures; returns the console errors."""
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url)  # sets the token cookie
        page.goto(f"{server.base}/runs/{RUN}")
        _wait(page, "Number((document.querySelector('#curves') || {dataset: {}}).dataset.points) > 0")
        page.wait_for_timeout(500)  # Plotly's transitions
        page.screenshot(path=str(IMAGES / "dashboard-run.png"))
        page.goto(f"{server.base}/tree?tree=taxi-grow")
        _wait(page, "document.querySelectorAll('#tree-graph .point').length > 1")
        box = page.locator("#tree-graph .point").nth(1).bounding_box()  # a child session, as a user clicks
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        _wait(page, "Number((document.querySelector('#node [data-curves]') || {dataset: {}}).dataset.points) > 0")
        page.mouse.move(5, 400)  # no hover label over the tree
        page.wait_for_timeout(500)
        page.screenshot(path=str(IMAGES / "dashboard-tree.png"), full_page=True)
        browser.close()
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--keep", type=Path, default=None, help="Work in this folder and keep it (default: a temporary one).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xdoe-docs-shots-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        server = Dashboard(work, make_store(work))
        try:
            errors = shoot(server, args.chromium)
        finally:
            server.stop()
    for name in ("dashboard-run.png", "dashboard-tree.png"):
        print(IMAGES / name)
    print("\n".join(f"console error: {e}" for e in errors) or "no console errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
