"""The set-up the ``xrun optimize`` tests share (issue 37): an experiment
document generated into a folder, ``xrun optimize`` run in-process on it,
and the study's trials and the manifest's points read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from xdoe.cli._xrun import main
from xdoe.design.runfiles import generate


def campaign(tmp: Path, data: dict[str, Any], *, name: str = "run") -> tuple[Path, Path]:
    """``(document, output)``: ``data`` written to ``tmp/name/doc.yaml`` and generated into ``tmp/name/out``."""
    folder = tmp / name
    folder.mkdir()
    doc = folder / "doc.yaml"
    doc.write_text(json.dumps(data))
    generate(doc, folder / "out")
    return doc, folder / "out"


def optimize(doc: Path, out: Path, *extra: str) -> None:
    """``xrun optimize --in-process -q`` of ``doc`` into ``out`` (its store ``out/xrun.sqlite``); exit 0."""
    done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(out), "--in-process", "-q", "--no-laydown",
                                     "--store", f"sqlite:///{out / 'xrun.sqlite'}", *extra])
    assert done.exit_code == 0, done.output


def trials(out: Path, uid: str = "quad") -> list[tuple[int, str, dict, list | None]]:
    """``(number, state, params, values)`` of each trial of the study's journal in ``out``."""
    from xdoe.design._optuna import OptunaSettings, open_study

    study = open_study(out / f"optuna-{uid}.journal", uid, OptunaSettings())
    return [(t.number, t.state.name, t.params, t.values) for t in study.get_trials()]


def points(out: Path) -> list[dict]:
    """The manifest's design points (``coded`` and ``natural``), one per trial."""
    return json.loads((out / "manifest.json").read_text())["design"]["doe"]["points"]


def interrupted(tmp: Path, data: dict[str, Any]) -> tuple[Path, Path, Path]:
    """``(document, whole, parts)``: ``data`` optimized to the end in
    ``tmp/whole``, and in ``tmp/parts`` stopped after 3 trials (whole
    batches: 4 written) and then killed after asking one trial of the next
    batch and before writing it."""
    from xdoe.design import OptunaStudy
    from xdoe.design._optuna import _ask, distributions
    from xdoe.design.runfiles import prepare

    doc, whole = campaign(tmp, data, name="whole")
    optimize(doc, whole)
    doc, parts = campaign(tmp, data, name="parts")
    optimize(doc, parts, "--max-trials", "3")
    assert len(points(parts)) == 4
    state = OptunaStudy(prepare(doc)[2], parts)
    _ask(state.study, state.design.factors, state.settings, state.seed, distributions(state.design.factors))
    return doc, whole, parts


def same_files(whole: Path, parts: Path, runs: int) -> None:
    """Both folders hold the same ``runs`` run files and ``design.csv``, byte for byte."""
    names = sorted(p.name for p in whole.glob("run-*.yaml"))
    assert len(names) == runs and names == sorted(p.name for p in parts.glob("run-*.yaml"))
    for name in names + ["design.csv"]:
        assert (whole / name).read_bytes() == (parts / name).read_bytes(), name
