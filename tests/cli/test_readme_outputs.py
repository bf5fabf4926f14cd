"""The docs' commands work as written, in order: since every command that
writes a file named with -o refuses an existing one unless --overwrite, a
file the docs write twice (the README's quick start is run again to extend
the campaign, the tutorial follows it in the same folder, and a reader comes
to the other pages after the tutorial) must be written with --overwrite from
its second time on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click

from xdoe.cli._xgen import main as xgen_main
from xdoe.cli._xrun import main as xrun_main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "getting-started" / "tutorial.md"
APPS = {"xrun": xrun_main, "xgen": xgen_main}


def _commands(markdown: str) -> list[list[str]]:
    """The xrun/xgen commands of the ```bash blocks, in order, as argv lists."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", markdown, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            for part in line.split("&&"):
                try:
                    argv = shlex.split(part, comments=True)
                except ValueError:  # not a command line (a shell script's text)
                    continue
                if argv and argv[0] in APPS:
                    out.append(argv)
    return out


def _written(argv: list[str]) -> tuple[str, bool] | None:
    """``(the file the command writes through its --output option, --overwrite given)``, or None."""
    command: click.Command = APPS[argv[0]]
    rest = argv[1:]
    while isinstance(command, click.Group) and rest and rest[0] in command.commands:
        command, rest = command.commands[rest[0]], rest[1:]
    option = next((p for p in command.params if p.name == "overwrite"), None)
    if option is None:  # not a command that writes one named file
        return None
    output = next(p for p in command.params if p.name == "output")
    path = output.default
    for flag, value in zip(rest, rest[1:]):
        if flag in output.opts:
            path = value
    return str(path), "--overwrite" in rest


def _refused(commands: list[list[str]], written: set[str]) -> list[str]:
    """The commands that would write a file of ``written`` (or one written
    before them) without --overwrite; adds what they write to ``written``."""
    refused = []
    for argv in commands:
        target = _written(argv)
        if target is None:
            continue
        path, overwrite = target
        if path in written and not overwrite:
            refused.append(" ".join(argv))
        written.add(path)
    return refused


def test_docs_never_write_a_file_twice_without_overwrite() -> None:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "run the same two commands again" in quick
    # the quick start is run again to extend the campaign; the tutorial follows it in the same folder
    written: set[str] = set()
    refused = _refused(_commands(quick) * 2 + _commands(TUTORIAL.read_text()), written)
    assert {"report.html", "curves.png", "effects.png", "results.csv"} <= written  # the parser found them
    after_tutorial = set(written)
    for page in sorted(DOCS.rglob("*.md")):  # each other page, read after the tutorial
        if page != TUTORIAL:
            refused += [f"{page.name}: {c}" for c in _refused(_commands(page.read_text()), set(after_tutorial))]
            written |= {w for argv in _commands(page.read_text()) if (w := (_written(argv) or ("",))[0])}
    assert len(written) >= 8  # report, export, curves, effects, design, laydown, halfnormal, contour
    assert refused == []
