"""The corpus of broken experiment documents (tests/documents/broken/*.yaml).

Each file says on line 1 ``# expect: <message fragment>``, optionally on
line 2 ``# args: <extra options>``, and marks the offending line with
``# <-``. ``xgen generate`` must exit with code 2, print one short message
naming ``file:line`` (the marked line) without a traceback, and write nothing;
``xgen check`` must fail the same way.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main

BROKEN = Path(__file__).resolve().parents[1] / "documents" / "broken"
CASES = sorted(BROKEN.glob("*.yaml"))


def _expectation(path: Path) -> tuple[str, list[str], int | None]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# expect: "), f"{path.name}: line 1 must be '# expect: ...'"
    fragment = lines[0][len("# expect: ") :]
    args = shlex.split(lines[1][len("# args: ") :]) if lines[1].startswith("# args: ") else []
    marked = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith("# <-")]
    assert len(marked) <= 1, f"{path.name}: more than one '# <-' marker"
    return fragment, args, (marked[0] if marked else None)


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_broken_document(path: Path, tmp_path: Path) -> None:
    fragment, args, line = _expectation(path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["generate", str(path), "--output", str(out), "--quiet", *args])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.startswith("error: "), message
    assert "Traceback" not in message
    assert len(message.splitlines()) == 1, message
    assert fragment in message, f"expected {fragment!r} in {message!r}"
    location = f"{path}:{line}:" if line is not None else f"{path}"
    assert location in message, f"expected {location!r} in {message!r}"
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary directory left behind either

    checked = CliRunner().invoke(main, ["check", str(path), *args])
    assert checked.exit_code == 2
    assert fragment in checked.output


def test_unknown_key_is_a_warning_without_strict(tmp_path: Path) -> None:
    path = BROKEN / "unknown_top_level_key_strict.yaml"
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert f"warning: {path}:5: descripton: unknown key 'descripton'" in result.output
    assert "ok: 1 design points x 1 repetitions" in result.output
