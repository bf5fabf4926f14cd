"""A full factorial's outputs joined from level texts (design/_grid.py) are
byte for byte the general writer's (issue 16), and the joined path is the one
that ran where it should."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from xdoe.design import _grid, prepare, write_runs
from xdoe.design._generate import RunSequence

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("xgen_outputs", ROOT / "scripts" / "xgen_outputs.py")
xgen_outputs = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(xgen_outputs)  # type: ignore[union-attr]


def _documents() -> dict:
    docs = xgen_outputs.synthetic()
    picked = {name: docs[name] for name in ("factorial-3x3-reps3", "odd-scalars", "uid-factor", "factorial-1x5x7x13")}
    quoted = xgen_outputs._levels_doc("1st run", {"a": {"levels": [1, 2]}, "b": {"levels": ["x", "y,z"]}}, reps=2)
    picked["quoted-uid"] = quoted  # run uids written quoted in YAML, a cell the CSV quotes
    for stem in ("cartpole", "rps-pettingzoo", "tictactoe"):  # full factorials with schedule levels
        picked[stem] = ROOT / "experiments" / f"{stem}.yaml"
    return picked


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _write(document, folder: Path, monkeypatch: pytest.MonkeyPatch, joined: bool) -> tuple[dict[str, bytes], dict]:
    """The output files and how many runs took the joined and the general path."""
    _, _, runs = prepare(document)
    runs._recurring = True  # small documents too (by default only designs whose levels recur join)
    counts = {"joined": 0, "general": 0, "grid": False}
    rows = RunSequence.rows

    def counted(self, run_file, factor_names, csv_text, general):
        def fallback(k: int):
            counts["general"] += 1
            return general(k)

        produced = rows(self, run_file, factor_names, csv_text, fallback) if joined else None
        counts["grid"] = produced is not None
        return produced

    with monkeypatch.context() as patch:
        patch.setattr(RunSequence, "rows", counted)
        write_runs(runs, folder)
    if counts["grid"]:
        counts["joined"] = len(runs) - counts["general"]
    return _files(folder), counts


@pytest.mark.parametrize("name", sorted(_documents()))
def test_joined_outputs_are_the_general_writers(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = _documents()[name]
    general, _ = _write(document, tmp_path / "general", monkeypatch, joined=False)
    joined, counts = _write(document, tmp_path / "joined", monkeypatch, joined=True)
    assert joined.keys() == general.keys()
    for file_name in general:
        assert joined[file_name] == general[file_name], file_name
    if name == "uid-factor":  # an environment uid from a factor: no template, every run general
        assert counts == {"joined": 0, "general": len(general) - 2, "grid": True}
    else:
        assert counts["grid"] and counts["general"] == 0 and counts["joined"] == len(general) - 2


def test_a_site_over_too_many_combinations_takes_the_general_writer(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    document = xgen_outputs.synthetic()["odd-scalars"]  # "two": "${num}${txt}" reads two factors
    general, _ = _write(document, tmp_path / "general", monkeypatch, joined=False)
    monkeypatch.setattr(_grid, "MAX_SITE_COMBINATIONS", 10)
    joined, counts = _write(document, tmp_path / "joined", monkeypatch, joined=True)
    assert joined == general
    assert counts["joined"] == 0 and counts["general"] == len(general) - 2


def test_float_zeros_and_quoted_cells_join_like_the_general_writer(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.0 == -0.0 (written differently), a cell the CSV quotes, a level YAML quotes
    document = xgen_outputs._levels_doc("zeros", {"a": {"levels": [0.0, -0.0, 1]}, "b": {"levels": ["p", 'q"r']}})
    general, _ = _write(document, tmp_path / "general", monkeypatch, joined=False)
    joined, counts = _write(document, tmp_path / "joined", monkeypatch, joined=True)
    assert joined == general and counts["general"] == 0 and counts["joined"] == 6
    assert b'"q""r"' in general["design.csv"] and b"-0.0" in general["design.csv"]


def test_levels_that_do_not_recur_are_not_kept() -> None:
    _, _, runs = prepare(xgen_outputs.synthetic()["factorial-2x200"])  # 400 runs, 202 levels
    assert runs.rows(runs.file_name, ["two", "many"], str, lambda k: ("", b"", b"")) is None
    _, _, runs = prepare(xgen_outputs.synthetic()["factorial-6x4"])
    assert runs.rows(runs.file_name, [f"f{i}" for i in range(6)], str, lambda k: ("", b"", b"")) is not None
