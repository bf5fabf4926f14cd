"""Extending a campaign (issue 9): xgen adds, keeps and retires run files and
never touches the store, results, checkpoints or files it did not write."""

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main
from xdoe.store import Store

DUMMY = Path(__file__).resolve().parents[2] / "experiments" / "dummy.yaml"


def xgen(*args: str):
    return CliRunner().invoke(main, list(args))


def _variant(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = DUMMY.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def _hashes(root: Path, *, skip=lambda rel: False) -> dict[str, str]:
    """sha256 of every file below ``root`` whose relative path ``skip`` does not select."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not skip(str(p.relative_to(root)))}


def _mtimes(root: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in root.glob("run-*.yaml")}


def _xgen_files(rel: str) -> bool:
    return rel.startswith(("run-", "manifest", "design", "retired/"))


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    """An output folder as a campaign leaves it: run files, a store with a
    recorded run, results, checkpoints and a file of the user."""
    out = tmp_path / "out"
    assert xgen("generate", str(DUMMY), "-o", str(out), "-q").exit_code == 0
    with Store(f"sqlite:///{out / 'xrun.sqlite'}") as store:
        assert store.url.endswith("xrun.sqlite")
    (out / "results" / "dummy-study-0000").mkdir(parents=True)
    (out / "results" / "dummy-study-0000" / "episodes.csv").write_text("episode,reward\n0,1.5\n")
    (out / "checkpoints").mkdir()
    (out / "checkpoints" / "brain.pt").write_bytes(b"\x00weights")
    (out / "notes.txt").write_text("my notes")
    return out


def test_more_repetitions_extend_without_force_and_keep_everything(campaign: Path, tmp_path: Path) -> None:
    """Defect 1: raising repetitions was refused, and --force deleted the store and results."""
    others, mtimes = _hashes(campaign, skip=_xgen_files), _mtimes(campaign)
    three = _variant(tmp_path, "three.yaml", ("repetitions: 2", "repetitions: 3"))
    dry = xgen("generate", str(three), "-o", str(campaign), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"would extend {campaign}: added 8, kept 16, retired 0" in dry.output
    assert _mtimes(campaign) == mtimes and len(mtimes) == 16
    done = xgen("generate", str(three), "-o", str(campaign))
    assert done.exit_code == 0, done.output
    assert f"extended {campaign}: added 8, kept 16, retired 0" in done.output
    assert _hashes(campaign, skip=_xgen_files) == others  # store, results, checkpoints, notes
    after = _mtimes(campaign)
    assert len(after) == 24 and {k: after[k] for k in mtimes} == mtimes  # untouched, same mtimes
    manifest = json.loads((campaign / "manifest.json").read_text())
    assert manifest["design"]["repetitions"] == 3 and len(manifest["files"]) == 25
    assert len((campaign / "design.csv").read_text().splitlines()) == 25
    assert xgen("generate", str(three), "-o", str(campaign)).output.startswith("up to date")


def test_fewer_repetitions_retire_files_never_delete(campaign: Path, tmp_path: Path) -> None:
    before = _hashes(campaign)
    one = _variant(tmp_path, "one.yaml", ("repetitions: 2", "repetitions: 1"))
    done = xgen("generate", str(one), "-o", str(campaign))
    assert done.exit_code == 0, done.output
    assert "added 0, kept 8, retired 8" in done.output and "run-dummy-study-0015.yaml" in done.output
    (retired,) = (campaign / "retired").iterdir()
    assert sorted(p.name for p in retired.glob("run-*.yaml")) == [f"run-dummy-study-{k:04d}.yaml" for k in range(8, 16)]
    for name in ("manifest.json", "design.csv", *(f"run-dummy-study-{k:04d}.yaml" for k in range(8, 16))):
        assert hashlib.sha256((retired / name).read_bytes()).hexdigest() == before[name]
    assert len(list(campaign.glob("run-*.yaml"))) == 8
    assert json.loads((campaign / "manifest.json").read_text())["design"]["runs"] == 8


def test_force_replaces_only_run_documents(campaign: Path, tmp_path: Path) -> None:
    """--force on a changed document: only run documents are replaced (the
    old ones retired); every other file is byte-identical."""
    everything, others = _hashes(campaign), _hashes(campaign, skip=_xgen_files)
    old_runs = _hashes(campaign, skip=lambda rel: not rel.startswith("run-"))
    changed = _variant(tmp_path, "changed.yaml", ("seed: 42", "seed: 43"))
    refused = xgen("generate", str(changed), "-o", str(campaign))
    assert refused.exit_code == 2 and "16 run documents would change" in refused.output
    assert _hashes(campaign) == everything  # refused: nothing written
    forced = xgen("generate", str(changed), "-o", str(campaign), "--force")
    assert forced.exit_code == 0, forced.output
    assert _hashes(campaign, skip=_xgen_files) == others
    (retired,) = (campaign / "retired").iterdir()
    assert _hashes(retired, skip=lambda rel: not rel.startswith("run-")) == old_runs


def test_another_experiment_coexists(campaign: Path, tmp_path: Path) -> None:
    first = _hashes(campaign)
    other = _variant(tmp_path, "other.yaml", ("uid: dummy-study", "uid: other-study"))
    done = xgen("generate", str(other), "-o", str(campaign))
    assert done.exit_code == 0, done.output
    assert _hashes(campaign, skip=lambda rel: rel not in first) == first
    assert (campaign / "manifest-other-study.json").is_file() and (campaign / "design-other-study.csv").is_file()
    assert len(list(campaign.glob("run-other-study-*.yaml"))) == 16
    assert xgen("generate", str(other), "-o", str(campaign)).output.startswith("up to date")
    assert xgen("generate", str(DUMMY), "-o", str(campaign)).output.startswith("up to date")


def test_a_file_xgen_did_not_write_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "run-dummy-study-0003.yaml").write_text("mine\n")
    refused = xgen("generate", str(DUMMY), "-o", str(out), "--force")
    assert refused.exit_code == 2 and "was not created by xgen" in refused.output  # issue 25: no manifest
    refused = xgen("generate", str(DUMMY), "-o", str(out), "--force", "--force-folder")
    assert refused.exit_code == 2 and "run-dummy-study-0003.yaml exist(s) but no manifest" in refused.output
    assert sorted(p.name for p in out.iterdir()) == ["run-dummy-study-0003.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left


def test_a_foreign_design_table_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "design.csv").write_text("my,own,table\n")
    # the plain names are taken by a file of the user: this experiment uses its own names
    assert xgen("generate", str(DUMMY), "-o", str(out), "-q").exit_code == 2  # not xgen's folder (issue 25)
    assert xgen("generate", str(DUMMY), "-o", str(out), "-q", "--force-folder").exit_code == 0
    assert (out / "design.csv").read_text() == "my,own,table\n"
    assert (out / "manifest-dummy-study.json").is_file() and (out / "design-dummy-study.csv").is_file()
    other = tmp_path / "other"
    other.mkdir()
    (other / "design-dummy-study.csv").write_text("mine\n")
    (other / "design.csv").write_text("mine too\n")
    refused = xgen("generate", str(DUMMY), "-o", str(other), "--force-folder")
    assert refused.exit_code == 2 and "design-dummy-study.csv exist(s) but no manifest" in refused.output
    assert sorted(p.name for p in other.iterdir()) == ["design-dummy-study.csv", "design.csv"]
