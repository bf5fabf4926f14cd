"""Write xgen's outputs for a corpus of experiment documents, to compare two
versions of xgen byte for byte (issue 16: speed work must not change one byte).

The corpus: ``experiments/*.yaml``, the synthetic documents of
:func:`synthetic` (a 4096-run 6 x 4 full factorial, LHS and maximin designs
with continuous factors, conditional factors, list/bool/float/odd-string
levels, ``$req`` references, repetitions) and every ``*.yaml``/``*.json``
document in the folders given with ``--corpus`` (for example the documents
the test suite passed to ``prepare``, recorded by a pytest plugin).

For each document, into ``OUT/<name>/``: the output folder of ``write_runs``
(run files, ``design.csv``, ``manifest.json``), ``docs.json`` (the first and
last run documents as built by ``runs[k]``, canonical JSON), ``figures.txt``
(the design's minimum distance and discrepancy unrounded, ``repr``),
``dry-run.txt`` (what ``xgen generate --dry-run`` prints in a fresh process, with its exit code)
and ``error.txt`` when the document is refused (the message is compared too);
and ``OUT/schema.json``, what ``xgen schema`` prints.

Usage::

    PYTHONPATH=<src A> python scripts/xgen_outputs.py OUT_A [--corpus DIR ...]
    PYTHONPATH=<src B> python scripts/xgen_outputs.py OUT_B [--corpus DIR ...]
    diff -r OUT_A OUT_B && echo identical
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_generate import document as factorial_document  # noqa: E402


def _levels_doc(uid: str, factors: dict, design: str = "auto", max_runs: int | None = None, reps: int = 1) -> dict:
    doc = factorial_document(2, 2)
    doc["uid"] = uid
    doc["seed"] = 7
    doc["factors"] = factors
    doc["design"] = design
    doc["repetitions"] = reps
    if max_runs is not None:
        doc["max_runs"] = max_runs
    names = list(factors)
    doc["definitions"]["environments"]["env"]["environment"]["params"] = {
        "length": 10, **{n: f"${{{n}}}" for n in names[: len(names) // 2]}}
    doc["definitions"]["agents"]["agent"]["brain"]["params"] = {
        "mixed": f"a-${{{names[-1]}}}-b", **{n: f"${{{n}}}" for n in names[len(names) // 2:]}}
    return doc


def synthetic() -> dict[str, dict]:
    """Documents that exercise every kind of level and design."""
    docs: dict[str, dict] = {"factorial-6x4": factorial_document(4, 6)}
    docs["factorial-3x3-reps3"] = {**factorial_document(3, 3), "repetitions": 3}
    docs["lhs"] = _levels_doc("lhs", {
        "lr": {"range": [1e-05, 0.1], "scale": "log"},
        "gamma": {"range": [0.9, 0.999]},
        "width": {"range": [4, 64], "integer": True},
        "kind": {"levels": ["a", "b", "c"]}}, design="lhs", max_runs=40, reps=2)
    docs["maximin"] = _levels_doc("maximin", {
        "lr": {"range": [1e-06, 1.0], "scale": "log"},
        "eps": {"range": [0.0, 0.5]},
        "k": {"levels": [1, 2, 3, 4, 5]}}, design="maximin", max_runs=30)
    texts = ["plain", "yes", "null", "with: colon", "quote\"d", "back\\slash", "tab\tnl\n", "ünïcödé",
             "emoji \U0001F600", "", " lead", "trail ", "#hash", "1.5", "-", "~", "a\u2028b", "ctl\x01\x7f",
             "ok/path_1.2-3", "@at", "*star", "&amp", "!bang", "%pc", "1e3", "0x1F", ".inf", "NaN", "Yes", "ON"]
    docs["odd-levels"] = _levels_doc("odd.levels", {
        "flag": {"levels": [True, False]},
        "num": {"levels": [1, 1.0, 2.5e-07]},
        "lst": {"levels": [[1, 2], [], ["x", "y: z"], [[1.5, None]]]},
        "mp": {"levels": [{"a": 1, "b": [True, "no"]}, {}]},
        "txt": {"levels": texts[:6]},
    }, design="full_factorial")
    docs["odd-scalars"] = _levels_doc("odd-scalars", {
        "flag": {"levels": [True, False, None]},
        "num": {"levels": [1, 1.0, 2.5e-07, -3, 1e20, 0.1, -0.0]},
        "txt": {"levels": texts},
    }, design="full_factorial")
    docs["odd-scalars"]["definitions"]["agents"]["agent"]["muscle"]["params"] = {
        "escaped": "$${txt} ${num}", "spaced": "  ${flag} ", "two": "${num}${txt}"}
    uid_doc = _levels_doc("uid-factor", {"u": {"levels": ["e1", "e2"]}, "who": {"levels": ["a", "b"]}})
    uid_doc["definitions"]["environments"]["env"]["environment"]["uid"] = "${u}"
    uid_doc["definitions"]["agents"]["agent"]["name"] = "${who}"
    uid_doc["definitions"]["sensors"]["all"] = {"e1": [0], "e2": ["e2.x"]}
    docs["uid-factor"] = uid_doc
    cond = {
        "uid": "cond", "seed": 1, "repetitions": 2,
        "factors": {"alpha": {"levels": [0.1, 0.5], "when": {"agent": ["learner"]}},
                    "tag": {"levels": ["x", "y"]}},
        "definitions": {
            "environments": {"e": {"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "e",
                                                   "params": {"tag": "${tag}"}}}},
            "agents": {
                "learner": {"name": "learner", "brain": {"name": "xdoe.agents:QLearningBrain",
                                                         "params": {"alpha": "${alpha}", "note": "α=${alpha}"}},
                            "muscle": {"name": "xdoe.agents:QLearningMuscle"}, "objective": {"name": "o:O"}},
                "random": {"name": "random", "brain": {"name": "xdoe.agents:DummyBrain"},
                           "muscle": {"name": "xdoe.agents:DummyMuscle"}, "objective": {"name": "o:O"}}},
            "simulation": {"v": {"name": "s:S"}},
            "phase_config": {"p": {"mode": "train", "worker": 1, "episodes": 1},
                             "q": {"mode": "test", "worker": 2, "episodes": 3}},
        },
        "schedule": [
            {"t": {"environments": [["e"]], "agents": {"name": "agent", "levels": [["learner"], ["random"]]},
                   "simulation": ["v"], "phase_config": ["p", "q"]}},
            {"u": {"agents": ["$req($prev)"], "phase_config": ["q"]}},
        ],
    }
    docs["conditional"] = cond
    # level counts whose figures depend on the summation order (5, 7, 13: numpy's pairwise
    # sums differ from a plain loop), and a column of 200 levels
    docs["factorial-1x5x7x13"] = _levels_doc("wide", {f"f{k}": {"levels": list(range(k))} for k in (1, 5, 7, 13)})
    docs["factorial-2x200"] = _levels_doc("wider", {"two": {"levels": ["a", "b"]},
                                                     "many": {"levels": [i / 8 for i in range(200)]}})
    return docs


def _dry_run(document, folder: Path) -> str:
    """``xgen generate --dry-run`` of ``document`` (a dict is written to
    ``document.yaml`` first) in a fresh process, as a user runs it (what it
    prints must not depend on what this process imported before), run in
    ``folder`` with relative paths so that the text does not depend on ``OUT``."""
    from ruamel.yaml import YAML

    if isinstance(document, dict):
        with open(folder / "document.yaml", "w", encoding="utf-8") as fh:
            YAML().dump(document, fh)
        document = "document.yaml"
    code = "from xdoe.cli._xgen import main; main()"
    proc = subprocess.run([sys.executable, "-c", code, "generate", str(document), "--dry-run", "-o", "never-written"],
                          cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, "COLUMNS": "100"}, timeout=600)
    return f"exit {proc.returncode}\n{proc.stdout}"


def _write_one(name: str, document, out: Path) -> None:
    from xdoe.design.runfiles import prepare, write_runs
    from xdoe.design.runfiles import MAX_FIGURE_POINTS
    from xdoe.documents._canonical import canonical_json
    from xdoe.errors import XdoeError

    folder = out / name
    folder.mkdir(parents=True)
    try:
        _exp, design, runs = prepare(document)
        write_runs(runs, folder / "out")
        picks = sorted({0, len(runs) - 1}) if len(runs) else []
        (folder / "docs.json").write_text("\n".join(canonical_json(runs[k]) for k in picks) + "\n", encoding="utf-8")
        figures = [design.min_distance] + ([design.discrepancy] if len(design) <= MAX_FIGURE_POINTS else [])
        (folder / "figures.txt").write_text(" ".join(repr(float(f)) for f in figures) + "\n", encoding="utf-8")
    except XdoeError as exc:
        (folder / "error.txt").write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
    (folder / "dry-run.txt").write_text(_dry_run(document, folder), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("out", type=Path, help="a new folder")
    parser.add_argument("--corpus", type=Path, nargs="*", default=[], help="folders of more documents")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out}: exists; give a new folder")
    args.out.mkdir(parents=True)
    from xdoe.documents import experiment_schema

    (args.out / "schema.json").write_text(json.dumps(experiment_schema(), indent=2, sort_keys=True) + "\n",
                                          encoding="utf-8")
    for path in sorted((ROOT / "experiments").glob("*.yaml")):
        _write_one(f"experiments-{path.stem}", path, args.out)
    for name, doc in synthetic().items():
        _write_one(f"synthetic-{name}", doc, args.out)
    for folder in args.corpus:
        for path in sorted(folder.iterdir()):
            if path.suffix == ".json":
                _write_one(f"corpus-{path.name}", json.loads(path.read_text(encoding="utf-8")), args.out)
            elif path.suffix in (".yaml", ".yml"):
                _write_one(f"corpus-{path.name}", path, args.out)
    print(f"{sum(1 for _ in args.out.iterdir())} documents written to {args.out}")


if __name__ == "__main__":
    main()
