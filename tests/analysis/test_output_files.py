"""Every command that writes a file the user names (-o FILE) treats it the
same way: an existing file is refused with one line and exit 2 and stays as it
was, unless --overwrite; nothing half-written or temporary is left behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun

EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "taxi.yaml"
COMMANDS = {  # name: (application, argv before -o given the campaign, file name)
    "xrun export": (xrun, lambda c: ["export", "--store", c["store"]], "table.csv"),
    "xrun report": (xrun, lambda c: ["report", str(c["dir"])], "report.html"),
    "xrun plot curves": (xrun, lambda c: ["plot", "curves", str(c["dir"])], "curves.png"),
    "xrun plot effects": (xrun, lambda c: ["plot", "effects", str(c["dir"])], "effects.svg"),
    "xrun plot laydown": (xrun, lambda c: ["plot", "laydown", str(c["runs"][0])], "laydown.svg"),
    "xgen plot design": (xgen, lambda c: ["plot", "design", str(EXPERIMENT)], "design.png"),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_existing_output_file_is_refused_unless_overwrite(campaign, tmp_path: Path, name: str) -> None:
    app, argv, file_name = COMMANDS[name]
    target = tmp_path / "out" / file_name
    target.parent.mkdir()
    target.write_text("my own notes\n")
    out = CliRunner().invoke(app, [*argv(campaign), "-o", str(target)])
    assert out.exit_code == 2, out.output
    assert out.stderr.strip().splitlines() == [
        f"error: {target}: exists; not overwritten (pass --overwrite to replace it, or choose another -o)"]
    assert target.read_text() == "my own notes\n" and sorted(target.parent.iterdir()) == [target]
    if name == "xrun report":
        return  # replaced with --overwrite in test_pictures (the report is the slow one)
    out = CliRunner().invoke(app, [*argv(campaign), "-o", str(target), "--overwrite"])
    assert out.exit_code == 0, out.output
    assert target.read_bytes() != b"my own notes\n" and target.stat().st_size > 500
    assert sorted(target.parent.iterdir()) == [target]  # no temporary file left
    assert oct(target.stat().st_mode & 0o777) == "0o644"

