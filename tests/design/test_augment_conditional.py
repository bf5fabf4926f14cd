"""xgen augment of a design with conditional factors (issue 37): copies,
more repetitions, space-filling points and confirmation runs respect the
conditions (an inactive factor stays absent, as in xgen generate); a
fold-over, axial points and a path of steepest ascent are refused at the
condition, with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from dummy_study import dummy_study

from xdoe.cli._xgen import main as xgen
from xdoe.design.runfiles import augment_runs, prepare, write_runs
from xdoe.errors import InputError


def _document() -> dict:
    """``agent`` (r or s) a schedule factor, ``x`` always, ``lr`` only for agent r."""
    data = dummy_study("cond", 3, {"method": "lhs", "n": 6},
                       {"x": {"range": [0, 10]}, "lr": {"range": [0.001, 0.1], "when": {"agent": [["r"]]}}},
                       output="out")
    defs = data["definitions"]
    defs["environments"]["e"]["environment"]["params"] = {"length": 3, "x": "${x}"}
    defs["agents"]["r"]["brain"]["params"] = {"lr": "${lr}"}
    defs["agents"]["s"] = {**defs["agents"]["r"], "name": "s",
                           "brain": {"name": "xdoe.agents:DummyBrain", "params": {}}}
    data["schedule"][0]["p"]["agents"] = {"name": "agent", "levels": [["r"], ["s"]]}
    return data


def _setup(tmp_path: Path, name: str = "a") -> tuple[Path, Path]:
    folder = tmp_path / name
    folder.mkdir()
    doc = folder / "exp.yaml"
    doc.write_text(yaml.safe_dump(_document(), sort_keys=False))
    out = folder / "out"
    result = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return doc, out


def _augment(doc: Path, out: Path, *args: str) -> None:
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "-q", *args])
    assert result.exit_code == 0, result.output


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def _runs(out: Path) -> list[dict]:
    return [yaml.safe_load(p.read_text()) for p in sorted(out.glob("run-*.yaml"))]


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _respects_conditions(run: dict) -> bool:
    levels = run["design_point"]["levels"]
    brain = run["schedule"][0]["p"]["agents"][0]["brain"]["params"]
    return ("lr" in levels) == (levels["agent"] == ["r"]) == ("lr" in brain)


def test_add_replicate_and_replicate_to_keep_the_conditions(tmp_path):
    doc, out = _setup(tmp_path)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    _augment(doc, out, "--add", "4")
    _augment(doc, out, "--replicate", "0,8")
    _augment(doc, out, "--replicate-to", "2")
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("run-*.yaml")}
    assert {k: v for k, v in after.items() if k in before} == before  # bytes and mtimes
    runs = _runs(out)
    # 6 + 4 + 2 points, one run each, then the second repetition of every point, numbered after them
    assert len(runs) == 24 and [r["uid"] for r in runs] == [f"cond-{k:04d}" for k in range(24)]
    assert [r["design_point"]["index"] for r in runs[:12]] == list(range(12))
    assert sorted(r["design_point"]["index"] for r in runs[12:]) == list(range(12))
    assert {r["design_point"]["repetition"] for r in runs[12:]} == {1}
    assert all(_respects_conditions(r) for r in runs)
    added = [r["design_point"]["levels"]["agent"] for r in runs[6:10]]
    assert ["r"] in added and ["s"] in added  # space-filling points on both branches
    for copy, original in ((10, 0), (11, 8)):
        assert runs[copy]["design_point"]["levels"] == runs[original]["design_point"]["levels"]
        assert runs[copy]["seed"] != runs[original]["seed"]
    points = _manifest(out)["design"]["doe"]["points"]
    assert len(points) == 12 and _manifest(out)["design"]["runs"] == 24
    assert all((p["coded"][2] is None) == (p["natural"]["agent"] == ["s"]) == ("lr" not in p["natural"])
               for p in points)
    assert [b["how"] for b in _manifest(out)["design"]["doe"]["info"]["blocks"][1:]] == [
        {"add": 4}, {"replicate": [0, 8]}, {"replicate_to": 2}]
    # the same requests in another folder: byte-identical; generate again: nothing changes
    doc2, out2 = _setup(tmp_path, "b")
    for args in (("--add", "4"), ("--replicate", "0,8"), ("--replicate-to", "2")):
        _augment(doc2, out2, *args)
    assert {k: v for k, v in _files(out2).items() if k.startswith("run-")} == {
        k: v for k, v in _files(out).items() if k.startswith("run-")}
    state = _files(out)
    regen = CliRunner().invoke(xgen, ["generate", str(doc), "-o", str(out), "-q"])
    assert regen.exit_code == 0, regen.output
    assert {k: v for k, v in _files(out).items() if k.startswith("run-")} == {
        k: v for k, v in state.items() if k.startswith("run-")}


def test_confirmation_runs_drop_the_factors_their_point_leaves_inactive(tmp_path):
    doc, out = _setup(tmp_path)
    runs = prepare(doc)[2]
    how = {"confirm": {"coded": {"agent": 1.0, "x": 0.5, "lr": 0.25}, "at": "best predicted design point"},
           "repetitions": 3}
    write_runs(augment_runs(runs, out, how), out)
    confirm = _runs(out)[6:]
    assert len(confirm) == 3 and {r["design_point"]["index"] for r in confirm} == {6}
    assert all(r["design_point"]["levels"] == {"agent": ["s"], "x": 7.5} for r in confirm)
    assert len({r["seed"] for r in confirm}) == 3
    assert _manifest(out)["design"]["doe"]["points"][6]["coded"] == [1.0, 0.5, None]
    # on the branch where lr applies, the point must give it
    with pytest.raises(InputError, match="^--confirm: no coded value of factor 'lr'$"):
        augment_runs(runs, out, {"confirm": {"coded": {"agent": -1.0, "x": 0.5}}, "repetitions": 1})
    ok = augment_runs(runs, out, {"confirm": {"coded": {"agent": 1.0, "x": 0.0}}, "repetitions": 1})
    assert ok[len(ok) - 1]["design_point"]["levels"] == {"agent": ["s"], "x": 5.0}


REFUSED = ("{option} is not defined on a design with conditional factors ({why}): factor 'lr' applies only "
           "when agent is ['r']; such a design takes --replicate, --replicate-to, --add, --confirm")


@pytest.mark.parametrize(("args", "why"), [
    (["--foldover"], "reversing its parent's sign changes which factors apply"),
    (["--foldover", "x"], "reversing its parent's sign changes which factors apply"),
    (["--axial"], "an axial point moves one factor alone, but a parent's moves change which factors apply"),
    (["--steepest-ascent", "3"], "the first-order model has no coefficient of a factor that applies to some "
                                 "points only"),
])
def test_geometric_augmentations_are_refused_at_the_condition_and_write_nothing(tmp_path, args, why):
    doc, out = _setup(tmp_path)
    _augment(doc, out, "--add", "2")
    state = _files(out)
    result = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), *args])
    assert result.exit_code == 2
    line = next(i for i, text in enumerate(doc.read_text().splitlines(), 1) if text.strip().startswith("when:"))
    assert result.output.strip() == (f"error: {doc}:{line}: factors.lr.when: "
                                     + REFUSED.format(option=args[0], why=why))
    assert _files(out) == state  # nothing written, the manifest included
