"""A small real campaign for the status/export/lineage tests: xgen's
``experiments/dummy.yaml`` (16 runs of the built-in dummy components)
generated into a folder; helpers to run some of them or to craft instances
with the same document (hence the same content hash) the executor records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "experiments" / "dummy.yaml"
EXPERIMENT = "dummy-study"
FACTORS = ["0.environments", "0.sensors.random", "length"]


def generate_campaign(folder: Path) -> list[Path]:
    """Generate the dummy study into ``folder``; its run files, in order."""
    from xdoe.design.runfiles import generate

    generate(DUMMY, folder)
    return sorted(folder.glob("run-*.yaml"))


def document_of(path: Path) -> dict[str, Any]:
    """The run document as the executor records it."""
    from xdoe.execution import load_plan

    return load_plan(path).document


def execute(path: Path, store: Any, results: Path) -> Any:
    """Run one run file through the real executor."""
    from xdoe.execution import run

    result = run(path, store=store, results=results)
    assert result.ok, result.error
    return result


def craft(store: Any, document: dict[str, Any], results: Path, status: str | None, *,
          phases: tuple[tuple[str, str], ...] = (("training", "train"),), episodes: int = 2,
          error: str | None = None, reward: float = 1.0) -> Any:
    """Record an instance by hand: ``phases`` each with ``episodes`` episodes,
    then finish with ``status`` (``None``: leave it running)."""
    rec = store.recorder(document, results_root=results)
    rec.start()
    for index, (name, mode) in enumerate(phases):
        rec.phase_started(index, name, mode, {"worker": 1})
        for e in range(episodes):
            rec.episode_finished(worker=0, episode=e, agent="random", steps=5, reward=reward + e,
                                 objective=reward + e, wall_time=0.01)
        rec.phase_finished()
    if status is not None:
        rec.finish(status, error=error)
    else:
        rec.flush()
    return rec
