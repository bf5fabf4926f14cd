"""Regenerate the quoted outputs and pictures of the README's quick start,
the tutorial, the DoE walk-through and "Adaptive or designed?" from the code,
by running their commands.

Each page's commands (every ``xgen``/``xrun`` line of its ```bash blocks, in
order; ``&&`` chains split, ``*`` globbed) run in a fresh temporary folder
(``experiments/`` linked into it), as a reader would type them from the root
of a clone: the tutorial (``docs/getting-started/tutorial.md``) after the
README's quick start, the DoE walk-through (``docs/how-to/doe-sequence.md``:
``experiments/taxi-screen.yaml`` screened and folded over on ``alpha``;
``experiments/taxi-surface.yaml`` with centre points, then axial points) on
its own, and "Adaptive or designed?" (``docs/how-to/adaptive-vs-designed.md``:
``experiments/peak-ccd.yaml`` and ``experiments/peak-adaptive.yaml``, with
the page's ``export PYTHONPATH=experiments`` applied) on its own. A marked block

    <!-- readme-figures:NAME -->
    ```text
    ...
    ```
    <!-- /readme-figures:NAME -->

after a ```bash block quotes what that block's last command printed (the
DoE blocks: only the sections of ``xrun analyze`` named in ``SECTIONS``); the
pictures its commands write are copied to ``docs/images/``.
``tests/cli/test_readme_figures.py`` runs the pages again and fails when a
block no longer matches what the code prints.

    python scripts/readme_figures.py            # rewrite the pages' blocks and docs/images/{taxi,doe,adaptive}-*.png
    python scripts/readme_figures.py --check    # exit 1 when a page is out of date (nothing written)
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
IMAGES = ROOT / "docs" / "images"
#: the pages whose commands run, by name: (the page, the pages whose commands run first in the same folder)
PAGES = {
    "tutorial": (ROOT / "docs" / "getting-started" / "tutorial.md", (README,)),
    "doe": (ROOT / "docs" / "how-to" / "doe-sequence.md", ()),
    "adaptive": (ROOT / "docs" / "how-to" / "adaptive-vs-designed.md", ()),
}
#: the terminal width the blocks are printed at
COLUMNS = 120
#: block name -> (its page, the sections of ``xrun analyze`` it quotes by title prefix; None: all it prints)
SECTIONS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "taxi-results": ("tutorial", None),
    "taxi-analyze": ("tutorial", None),
    "doe-screen": ("doe", ("Factor effects", "Interactions")),
    "doe-foldover": ("doe", ("Factor effects", "Interactions", "Two-level screening model")),
    "doe-curvature": ("doe", ("Curvature",)),
    "doe-surface": ("doe", ("Factor effects", "Canonical analysis")),
    "adaptive-designed": ("adaptive", ("Second-order model", "Canonical analysis")),
    "adaptive-optuna": ("adaptive", ("Design points", "adaptive design")),
}
#: picture in docs/images -> (its page, the file the page's commands write, in the folder they run in)
PICTURES = {
    "taxi-curves.png": ("tutorial", "curves.png"),
    "taxi-effects.png": ("tutorial", "effects.png"),
    "doe-halfnormal.png": ("doe", "halfnormal.png"),
    "doe-contour.png": ("doe", "contour.png"),
    "adaptive-contour.png": ("adaptive", "contour.png"),
    "adaptive-optimization.png": ("adaptive", "optimization.png"),
}
_BLOCK = re.compile(r"(<!-- readme-figures:(?P<name>[\w-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /readme-figures:(?P=name) -->)",
                    re.S)
#: a ```bash block, or a marked block
_STEP = re.compile(r"```bash\n(?P<bash>.*?)```|<!-- readme-figures:(?P<name>[\w-]+) -->", re.S)


def commands(bash: str) -> list[list[str]]:
    """The xgen/xrun commands (and ``export NAME=VALUE`` lines) of a ```bash
    block's text, in order, as argv lists."""
    out = []
    for line in bash.replace("\\\n", " ").splitlines():
        for part in line.split(" #", 1)[0].split("&&"):
            argv = shlex.split(part, comments=True)
            if argv and (argv[0] in ("xgen", "xrun") or (argv[0] == "export" and len(argv) == 2 and "=" in argv[1])):
                out.append(argv)
    return out


def export(argv: list[str], folder: Path) -> None:
    """``export NAME=VALUE`` in this process; ``PYTHONPATH``'s entries (relative
    to ``folder``) also go to the front of ``sys.path``, as a new ``xrun`` would
    see them (the commands run in this process)."""
    name, _, value = argv[1].partition("=")
    os.environ[name] = value
    if name == "PYTHONPATH":
        sys.path[:0] = [str(folder / entry) for entry in value.split(os.pathsep) if entry]


def steps(markdown: str) -> list[tuple[list[list[str]], str | None]]:
    """``(the commands of each ```bash block, the name of the marked block right after it or None)``."""
    out: list[tuple[list[list[str]], str | None]] = []
    for m in _STEP.finditer(markdown):
        if m["bash"] is not None:
            out.append((commands(m["bash"]), None))
        elif out and out[-1][1] is None:
            out[-1] = (out[-1][0], m["name"])
    return out


def invoke(argv: list[str]) -> str:
    """Run one ``xgen``/``xrun`` command line in this process (``*`` globbed in
    the working directory); returns what it printed."""
    from click.testing import CliRunner

    from xdoe.cli._xgen import main as xgen
    from xdoe.cli._xrun import main as xrun

    args = [a for arg in argv[1:] for a in (sorted(glob.glob(arg)) or [arg] if "*" in arg else [arg])]
    env = {"COLUMNS": str(COLUMNS), "NO_COLOR": "1", "XRUN_STORE": None}
    result = CliRunner(env=env).invoke({"xgen": xgen, "xrun": xrun}[argv[0]], args)
    if result.exit_code != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {result.exit_code}: {result.output}")
    return result.stdout


def run_page(name: str, folder: Path) -> dict[str, str]:
    """Run the commands of page ``name`` (and of the pages before it) in
    ``folder``, as from the root of a clone; returns what the command before
    each marked block printed, by block name."""
    page, before = PAGES[name]
    (folder / "experiments").symlink_to(ROOT / "experiments", target_is_directory=True)
    printed: dict[str, str] = {}
    here, environ, saved_path = os.getcwd(), dict(os.environ), list(sys.path)
    os.chdir(folder)
    try:
        for path in (*before, page):
            for argvs, block in steps(path.read_text("utf-8")):
                text = ""
                for argv in argvs:
                    if argv[0] == "export":
                        export(argv, folder)
                    else:
                        text = invoke(argv)
                if block is not None:
                    printed[block] = text
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = saved_path
    return printed


def quoted(printed: dict[str, str]) -> dict[str, str]:
    """What each marked block quotes of what was printed before it."""
    out = {}
    for name, text in printed.items():
        sections = SECTIONS[name][1]
        out[name] = (analysis_sections(text, sections) if sections is not None
                     else "\n".join(line.rstrip() for line in text.splitlines()) + "\n")
    return out


def analysis_sections(text: str, prefixes: tuple[str, ...]) -> str:
    """The tables of an ``xrun analyze`` text whose titles start with one of
    ``prefixes``, and the lines after the last table from the first that
    starts with one (an optuna design's best trial and importances)."""
    out, current = [], []
    for line in text.splitlines():
        current.append(line.rstrip())
        if line.startswith("└"):  # a table's last line
            if current[0].startswith(prefixes):
                out.append("\n".join(current))
            current = []
    first = next((i for i, line in enumerate(current) if line.startswith(prefixes)), None)
    if first is not None:  # not the warnings before them
        out.append("\n".join(current[first:]).rstrip("\n"))
    return "\n\n".join(out) + "\n"


def readme_blocks(text: str) -> dict[str, str]:
    """The blocks a page quotes, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def replace_blocks(text: str, new: dict[str, str]) -> str:
    """``text`` with every marked block's body replaced by ``new[name]``.

    Raises:
        KeyError: a block of ``new`` has no markers in ``text``.
    """
    missing = set(new) - set(readme_blocks(text))
    if missing:
        raise KeyError(f"no markers for {', '.join(sorted(missing))}")
    return _BLOCK.sub(lambda m: m.group(1) + new.get(m["name"], m["body"]) + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when a page is out of date")
    args = parser.parse_args(argv)
    stale, written = [], []
    for name, (page, _) in PAGES.items():
        with tempfile.TemporaryDirectory() as tmp:
            new = quoted(run_page(name, Path(tmp)))
            text = page.read_text("utf-8")
            stale += [block for block, body in readme_blocks(text).items() if new.get(block, body) != body]
            if args.check:
                continue
            page.write_text(replace_blocks(text, new), "utf-8")
            for picture, (of, made) in PICTURES.items():
                if of == name:
                    shutil.copyfile(Path(tmp) / made, IMAGES / picture)
            written += [str(page.relative_to(ROOT)), *(f"docs/images/{p}" for p, (of, _) in PICTURES.items() if of == name)]
    if args.check:
        print("the pages are up to date" if not stale else f"out of date: {', '.join(stale)}")
        return 1 if stale else 0
    print(f"wrote {', '.join(written)}" + (f" (changed: {', '.join(stale)})" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
