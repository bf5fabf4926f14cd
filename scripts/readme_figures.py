"""Regenerate the README's Taxi-study outputs and pictures from the code.

Two studies: the quick start (``experiments/taxi.yaml``) and the DoE
walk-through (``experiments/taxi-screen.yaml`` screened, folded over on
``alpha``; ``experiments/taxi-surface.yaml`` with centre points, then
axial points), each run with the README's commands in a temporary folder.

Runs the README's quick start (``xgen generate experiments/taxi.yaml``, then
every run document) in a temporary folder, then the README's read commands,
and writes what they print between the README's markers

    <!-- readme-figures:NAME -->
    ```
    ...
    ```
    <!-- /readme-figures:NAME -->

and the pictures to ``docs/images/``. ``tests/cli/test_readme_figures.py``
reruns the study and fails when a block no longer matches what the code prints.

    python scripts/readme_figures.py            # rewrite README.md and docs/images/taxi-*.png
    python scripts/readme_figures.py --check    # exit 1 when README.md is out of date (nothing written)
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
IMAGES = ROOT / "docs" / "images"
#: the terminal width the blocks are printed at
COLUMNS = 120
#: block name -> the xrun arguments after the output folder
BLOCKS = {
    "taxi-results": ["results"],
    "taxi-analyze": ["analyze"],
}
PICTURES = {
    "taxi-curves.png": ["plot", "curves"],
    "taxi-effects.png": ["plot", "effects"],
}
#: block name -> (study step, the sections of ``xrun analyze`` it quotes, by title prefix)
DOE_BLOCKS = {
    "doe-screen": ("screen", ("Factor effects", "Interactions")),
    "doe-foldover": ("foldover", ("Factor effects", "Interactions", "Two-level screening model")),
    "doe-curvature": ("centred", ("Curvature",)),
    "doe-surface": ("surface", ("Factor effects", "Canonical analysis")),
}
#: picture -> (study step, ``xrun plot`` arguments)
DOE_PICTURES = {
    "doe-halfnormal.png": ("foldover", ["plot", "design"]),
    "doe-contour.png": ("surface", ["plot", "design"]),
}
_BLOCK = re.compile(r"(<!-- readme-figures:(?P<name>[\w-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /readme-figures:(?P=name) -->)",
                    re.S)


def run_study(folder: Path) -> Path:
    """Generate and run the Taxi study in ``folder``; returns its output folder."""
    from xdoe.design import generate
    from xdoe.execution import run
    from xdoe.store import Store

    out = folder / "_outputs"
    generate(ROOT / "experiments" / "taxi.yaml", out)
    with Store(f"sqlite:///{out / 'xrun.sqlite'}") as store:
        for path in sorted(out.glob("run-*.yaml")):
            result = run(path, store=store, results=out / "results")
            if not result.ok:
                raise RuntimeError(f"{path.name}: {result.error}")
    return out


def _xrun(args: list[str]) -> str:
    from click.testing import CliRunner

    from xdoe.cli._xrun import main

    result = CliRunner(env={"COLUMNS": str(COLUMNS), "NO_COLOR": "1", "XRUN_STORE": None}).invoke(main, args)
    if result.exit_code != 0:
        raise RuntimeError(f"xrun {' '.join(args)} exited {result.exit_code}: {result.output}")
    return result.stdout


def blocks(out: Path) -> dict[str, str]:
    """What the README's read commands print on the study in ``out``, by block name
    (``_outputs`` as the folder name, as the README writes it)."""
    return {name: "\n".join(line.rstrip() for line in _xrun([args[0], str(out), *args[1:]]).splitlines()) + "\n"
            for name, args in BLOCKS.items()}


def _xgen(args: list[str], cwd: Path) -> str:
    import os

    from click.testing import CliRunner

    from xdoe.cli._xgen import main

    here = os.getcwd()
    os.chdir(cwd)  # the README's relative output folders (_outputs/screen...)
    try:
        result = CliRunner(env={"COLUMNS": str(COLUMNS), "NO_COLOR": "1"}).invoke(main, args)
    finally:
        os.chdir(here)
    if result.exit_code != 0:
        raise RuntimeError(f"xgen {' '.join(args)} exited {result.exit_code}: {result.output}")
    return result.stdout


def _run_new(out: Path) -> None:
    """``xrun experiment-start`` on ``out``: the runs not finished yet (in this process)."""
    _xrun(["experiment-start", str(out), "--store", f"sqlite:///{out / 'xrun.sqlite'}", "--results",
           str(out / "results"), "--in-process", "--quiet"])


def run_walkthrough(folder: Path) -> dict[str, Path]:
    """The README's DoE walk-through in ``folder``: the screen and its
    fold-over on ``alpha``, the surface study with centre points and then
    axial points; returns the output folder of each step (a step's analysis
    is read before the next step changes its folder: the folders of
    ``centred`` and ``screen`` are copies)."""
    import shutil

    experiments = ROOT / "experiments"
    steps: dict[str, Path] = {}
    _xgen(["generate", str(experiments / "taxi-screen.yaml"), "-q"], folder)
    screen = folder / "_outputs" / "screen"
    _run_new(screen)
    steps["screen"] = shutil.copytree(screen, folder / "steps" / "screen")
    _xgen(["augment", str(experiments / "taxi-screen.yaml"), "--foldover", "alpha"], folder)
    _run_new(screen)
    steps["foldover"] = screen
    _xgen(["generate", str(experiments / "taxi-surface.yaml"), "-q"], folder)
    surface = folder / "_outputs" / "surface"
    _run_new(surface)
    steps["centred"] = shutil.copytree(surface, folder / "steps" / "centred")
    _xgen(["augment", str(experiments / "taxi-surface.yaml"), "--axial"], folder)
    _run_new(surface)
    steps["surface"] = surface
    return steps


def analysis_sections(text: str, prefixes: tuple[str, ...]) -> str:
    """The tables of an ``xrun analyze`` text whose titles start with one of ``prefixes``."""
    out, current = [], []
    for line in text.splitlines():
        current.append(line.rstrip())
        if line.startswith("└"):  # a table's last line
            if current[0].startswith(prefixes):
                out.append("\n".join(current))
            current = []
    return "\n\n".join(out) + "\n"


def doe_blocks(steps: dict[str, Path]) -> dict[str, str]:
    """What the walk-through's ``xrun analyze`` prints, the quoted sections, by block name."""
    return {name: analysis_sections(_xrun(["analyze", str(steps[step])]), prefixes)
            for name, (step, prefixes) in DOE_BLOCKS.items()}


def readme_blocks(text: str) -> dict[str, str]:
    """The blocks the README quotes, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def replace_blocks(text: str, new: dict[str, str]) -> str:
    """``text`` with every marked block's body replaced by ``new[name]``.

    Raises:
        KeyError: a block of ``new`` has no markers in ``text``.
    """
    missing = set(new) - set(readme_blocks(text))
    if missing:
        raise KeyError(f"README.md has no markers for {', '.join(sorted(missing))}")
    return _BLOCK.sub(lambda m: m.group(1) + new.get(m["name"], m["body"]) + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when README.md is out of date")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = run_study(Path(tmp))
        new = blocks(out)
        (Path(tmp) / "doe").mkdir()
        steps = run_walkthrough(Path(tmp) / "doe")
        new.update(doe_blocks(steps))
        text = README.read_text("utf-8")
        updated = replace_blocks(text, new)
        if args.check:
            stale = [name for name, body in readme_blocks(text).items() if new.get(name, body) != body]
            print("README.md is up to date" if not stale else f"README.md is out of date: {', '.join(stale)}")
            return 1 if stale else 0
        README.write_text(updated, "utf-8")
        for name, command in PICTURES.items():
            _xrun([*command, str(out), "-o", str(IMAGES / name), "--overwrite"])
        for name, (step, command) in DOE_PICTURES.items():
            _xrun([*command, str(steps[step]), "-o", str(IMAGES / name), "--overwrite"])
        print(f"wrote {README.relative_to(ROOT)} ({', '.join(new)}) and "
              f"{', '.join(str((IMAGES / n).relative_to(ROOT)) for n in [*PICTURES, *DOE_PICTURES])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
