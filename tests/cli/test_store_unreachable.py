"""Read commands on a store whose server cannot be reached (issue 33, item 5):
one ``error:`` line and the same exit code, 2 (the environment's problem, as
a store that cannot be opened), for every command."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xrun import main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("args", [["status"], ["results"], ["analyze"], ["export", "-o", "{tmp}/x.csv"],
                                  ["report", "-o", "{tmp}/r.html"]])
def test_a_store_that_cannot_be_reached_is_one_line_exit_2(args: list[str], tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="the PostgreSQL driver (psycopg) is not installed")
    url = f"postgresql+psycopg://xdoe:secret@127.0.0.1:{_closed_port()}/nowhere"
    result = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args] + ["--store", url])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "secret" not in result.output and "127.0.0.1" in result.output
    assert not list(tmp_path.iterdir())
