"""Writing outputs: files, canonical bytes, atomicity, up-to-date, streaming."""

import csv
import hashlib
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from xdoe.design.runfiles import RunSequence, generate, prepare, write_runs
from xdoe.design.runfiles._output import design_figures
from xdoe.documents import load_run_document
from xdoe.errors import InputError

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
DUMMY = EXPERIMENTS / "dummy.yaml"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def test_generate_without_output_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    gen = generate(DUMMY)
    runs, design = gen
    assert isinstance(runs, RunSequence) and len(runs) == 16 and gen.written is None
    assert list(tmp_path.iterdir()) == []


def test_written_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    gen = generate(DUMMY, output=out)
    assert gen.written.status == "written"
    names = sorted(p.name for p in out.iterdir())
    assert names == ["design.csv", "manifest.json"] + [f"run-dummy-study-{k:04d}.yaml" for k in range(16)]
    # each run file: canonical YAML of the run document, valid for xrun
    for k in range(16):
        path = out / f"run-dummy-study-{k:04d}.yaml"
        data = YAML(typ="safe").load(path.read_text())
        assert data == gen.runs[k]
        assert data["uid"] == f"dummy-study-{k:04d}"
        assert data["design_point"]["index"] == k % 8 and data["design_point"]["repetition"] == k // 8
        model, _ = load_run_document(path)
        assert model.uid == data["uid"]
    text = (out / "run-dummy-study-0000.yaml").read_text()
    assert "${" not in text and "$req" not in text
    # design.csv
    rows = list(csv.DictReader(io.StringIO((out / "design.csv").read_text())))
    assert list(rows[0]) == ["run_uid", "design_point", "repetition", "seed", "0.environments", "0.sensors.random", "length"]
    assert len(rows) == 16 and rows[9]["run_uid"] == "dummy-study-0009" and rows[9]["repetition"] == "1"
    # levels read as values (issue 22): a schedule level ["small"] reads small
    assert rows[0]["0.environments"] == "small" and rows[0]["length"] == "5"
    assert int(rows[3]["seed"]) == gen.runs[3]["seed"]
    # manifest
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["method"] == "full_factorial"
    assert manifest["input_sha256"] == hashlib.sha256(DUMMY.read_bytes()).hexdigest()
    assert manifest["design"]["points"] == 8 and manifest["design"]["runs"] == 16
    assert manifest["design"]["min_distance"] == 1.0 and manifest["design"]["discrepancy"] > 0
    files = {f["name"]: f["sha256"] for f in manifest["files"]}
    assert set(files) == set(names) - {"manifest.json"}
    for name, sha in files.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == sha
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary directory left


def test_byte_identical_and_up_to_date(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    generate(DUMMY, output=a)
    generate(DUMMY, output=b)
    assert _snapshot(a) == _snapshot(b)
    before = {p.name: p.stat().st_mtime_ns for p in a.iterdir()}
    assert generate(DUMMY, output=a).written.status == "up to date"
    assert {p.name: p.stat().st_mtime_ns for p in a.iterdir()} == before


def test_different_output_is_refused_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    generate(DUMMY, output=out)
    changed = tmp_path / "changed.yaml"
    changed.write_text(DUMMY.read_text().replace("seed: 42", "seed: 43"))
    before = _snapshot(out)
    with pytest.raises(InputError, match="16 run documents would change .*; use --force"):
        generate(changed, output=out)
    assert _snapshot(out) == before
    assert generate(changed, output=out, force=True).written.status == "extended"
    assert _snapshot(out) != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["changed.yaml", "out"]
    # the replaced documents were retired, not deleted
    (retired,) = (out / "retired").iterdir()
    assert {p.name: p.read_bytes() for p in retired.glob("run-*.yaml")} == {
        k: v for k, v in before.items() if k.startswith("run-")}
    # an edited run file makes the output different too
    (out / "run-dummy-study-0003.yaml").write_text("edited\n")
    with pytest.raises(InputError, match="would change"):
        generate(changed, output=out)


def test_foreign_directory_is_never_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep")
    with pytest.raises(InputError, match="was not created by xgen"):  # issue 25: not without --force-folder
        generate(DUMMY, output=out, force=True)
    assert sorted(p.name for p in out.iterdir()) == ["precious.txt"]
    assert generate(DUMMY, output=out, force=True, force_folder=True).written.status == "written"
    assert (out / "precious.txt").read_text() == "keep"
    assert len(list(out.glob("run-*.yaml"))) == 16
    empty = tmp_path / "empty"
    empty.mkdir()
    assert generate(DUMMY, output=empty).written.status == "written"


def test_more_repetitions_leave_existing_runs_untouched(tmp_path: Path) -> None:
    two, three = tmp_path / "two", tmp_path / "three"
    generate(DUMMY, output=two)
    doc3 = tmp_path / "three.yaml"
    doc3.write_text(DUMMY.read_text().replace("repetitions: 2", "repetitions: 3"))
    generate(doc3, output=three)
    old, new = _snapshot(two), _snapshot(three)
    runs_old = {k: v for k, v in old.items() if k.startswith("run-")}
    assert len(runs_old) == 16 and len([k for k in new if k.startswith("run-")]) == 24
    for name, data in runs_old.items():
        assert new[name] == data


def test_an_expansion_error_writes_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "bad.yaml"
    text = DUMMY.read_text().replace(
        "  - testing:                                     # everything else as in training\n",
        "  - testing:\n      agents:\n        - - $req(phase=0, index=3)\n",
    )
    doc.write_text(text)
    from xdoe.errors import DocumentError

    with pytest.raises(DocumentError, match="index 3 out of range"):
        generate(doc, output=tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def _peak_writing(tmp_path: Path, points: int) -> int:
    doc = {
        "uid": "mem",
        "factors": {"x": {"levels": [i / points for i in range(points)]}},
        "definitions": {
            "environments": {"e": {"environment": {"name": "m:E", "uid": "e", "params": {"x": "${x}"}}}},
            "agents": {"a": {"brain": {"name": "m:B"}, "muscle": {"name": "m:M"}, "objective": {"name": "m:O"}}},
            "simulation": {"s": {"name": "m:S"}},
            "phase_config": {"p": {"mode": "train"}},
        },
        "schedule": [{"p": {"environments": [["e"]], "agents": [["a"]], "simulation": ["s"], "phase_config": ["p"]}}],
    }
    out = tmp_path / f"out{points}"
    _, design, runs = prepare(doc)
    design_figures(design)  # the design's own metrics are not part of the streaming
    tracemalloc.start()
    try:
        write_runs(runs, out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_writing_streams(tmp_path: Path) -> None:
    small = _peak_writing(tmp_path, 100)
    large = _peak_writing(tmp_path, 1000)
    # ten times the runs: the peak grows only by the design array, not by the documents
    assert large < small + 500_000, (small, large)
