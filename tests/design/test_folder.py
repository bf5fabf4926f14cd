"""xdoe.design.runfiles.folder_experiments: the experiments of an xgen output folder,
from its manifests (issue 22: the read commands choose one of them)."""

from __future__ import annotations

from pathlib import Path

from xdoe.design.runfiles import folder_experiments, generate

DUMMY = Path(__file__).resolve().parents[2] / "experiments" / "dummy.yaml"


def _document(tmp_path: Path, uid: str) -> Path:
    path = tmp_path / f"{uid}.yaml"
    path.write_text(DUMMY.read_text().replace("uid: dummy-study", f"uid: {uid}"))
    return path


def test_two_experiments_in_one_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    generate(_document(tmp_path, "first-study"), out)
    generate(_document(tmp_path, "second-study"), out)
    found = folder_experiments(out)
    assert list(found) == ["first-study", "second-study"]  # manifest.json first
    first, second = found["first-study"], found["second-study"]
    assert first.manifest == out / "manifest.json" and first.design_csv == out / "design.csv"
    assert second.manifest == out / "manifest-second-study.json"
    assert second.design_csv == out / "design-second-study.csv"
    assert len(first.files) == 16 and all(n.startswith("run-first-study-") for n in first.files)
    assert set(second.files) == {p.name for p in out.glob("run-second-study-*.yaml")}


def test_the_uid_comes_from_any_readable_run_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    generate(_document(tmp_path, "first-study"), out)
    (out / "run-first-study-0000.yaml").unlink()
    (out / "run-first-study-0001.yaml").write_text("uid: [unclosed\n")
    assert list(folder_experiments(out)) == ["first-study"]
    for path in out.glob("run-*.yaml"):
        path.unlink()
    assert folder_experiments(out) == {}  # no run file names the experiment


def test_a_folder_without_manifests_or_with_a_broken_one(tmp_path: Path) -> None:
    assert folder_experiments(tmp_path) == {}
    (tmp_path / "manifest.json").write_text("{not json")
    (tmp_path / "run-x.yaml").write_text("uid: x\nexperiment_uid: x\n")
    assert folder_experiments(tmp_path) == {}


def test_a_missing_folder_or_a_file_has_no_experiments(tmp_path: Path) -> None:
    """As ``Path.glob`` answered before the folder was listed as text."""
    assert folder_experiments(tmp_path / "nowhere") == {}
    (tmp_path / "file").write_text("x")
    assert folder_experiments(tmp_path / "file") == {}
