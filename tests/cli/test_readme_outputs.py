"""The README's commands work as written, in order: since every command that
writes a file named with -o refuses an existing one unless --overwrite, a
file the README writes twice (the quick start is run again to extend the
campaign) must be written with --overwrite from its second time on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click

from xdoe.cli._xgen import main as xgen_main
from xdoe.cli._xrun import main as xrun_main

ROOT = Path(__file__).resolve().parents[2]
APPS = {"xrun": xrun_main, "xgen": xgen_main}


def _commands(markdown: str) -> list[list[str]]:
    """The xrun/xgen commands of the ```bash blocks, in order, as argv lists."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", markdown, flags=re.S):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            for part in line.split("&&"):
                argv = shlex.split(part, comments=True)
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


def test_readme_never_writes_a_file_twice_without_overwrite() -> None:
    readme = (ROOT / "README.md").read_text()
    quick, rest = readme.split("## What it does", 1)
    assert "run the same two commands again" in quick
    commands = _commands(quick) * 2 + _commands(rest)  # the quick start is run again to extend the campaign
    written: set[str] = set()
    refused = []
    for argv in commands:
        target = _written(argv)
        if target is None:
            continue
        path, overwrite = target
        if path in written and not overwrite:
            refused.append(" ".join(argv))
        written.add(path)
    assert len(written) >= 6  # report, export, curves, effects, design, laydown: the parser found them
    assert refused == []
