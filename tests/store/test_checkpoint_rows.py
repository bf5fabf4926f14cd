"""``store.checkpoints.record_checkpoint``: the rows it keeps, the best flag
it sets, the row of the same path it replaces (whatever its group), on every
store backend."""

from __future__ import annotations

from pathlib import Path

from xdoe.store import Store
from tests.store.conftest import run_document


def _record(store: Store, instance: int, phase_id: int, agent: str, path: Path, metric: float | None,
            keep: int = 1):
    return store.checkpoints.record_checkpoint(instance, agent=agent, phase_id=phase_id, step=1, episode=0,
                                               path=path, sha256="cd" * 32, metric=metric, keep=keep)


def test_the_newest_and_the_best_are_kept_with_one_best_flag(tmp_path: Path, store: Store) -> None:
    recorder = store.recorder(run_document(), results_root=tmp_path / "results")
    instance = recorder.start()
    recorder.phase_started(0, "training", "train", {})
    phase = recorder.phase_id
    first, doomed = _record(store, instance, phase, "a", tmp_path / "1.pt", 1.0)
    assert first.best and doomed == []
    second, doomed = _record(store, instance, phase, "a", tmp_path / "3.pt", 3.0)
    assert second.best and doomed == [str(tmp_path / "1.pt")]  # neither the newest nor the best now
    third, doomed = _record(store, instance, phase, "a", tmp_path / "2.pt", 2.0)
    assert not third.best and doomed == []  # the best (3.0) stays beside the newest
    rows = {Path(c.path).name: c.best for c in store.checkpoints.of_instance(instance)}
    assert rows == {"3.pt": True, "2.pt": False}
    recorder.finish("finished")


def test_a_checkpoint_replaces_the_row_of_its_path_in_another_group(tmp_path: Path, store: Store) -> None:
    recorder = store.recorder(run_document(), results_root=tmp_path / "results")
    instance = recorder.start()
    recorder.phase_started(0, "training", "train", {})
    phase = recorder.phase_id
    _record(store, instance, phase, "a", tmp_path / "same.pt", 5.0)
    info, doomed = _record(store, instance, phase, "b", tmp_path / "same.pt", None)
    assert doomed == [] and not info.best  # no metric: no best
    assert [(c.agent, Path(c.path).name) for c in store.checkpoints.of_instance(instance)] == [("b", "same.pt")]
    recorder.finish("finished")
