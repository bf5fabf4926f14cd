"""What an ``xrun`` command prints, for tests: :func:`invoke` runs it in
this process (click's runner) and checks exit 0; :func:`json_of` reads the
JSON object a ``--format json`` command prints (after any warning lines)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from xdoe.cli._xrun import main


def invoke(*args: str) -> str:
    """The output of ``xrun ARGS...``, which must exit 0."""
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code == 0, done.output
    return done.output


def json_of(*args: str) -> dict[str, Any]:
    """The JSON object ``xrun ARGS...`` prints."""
    text = invoke(*args)
    return json.loads(text[text.index("{"):text.rindex("}") + 1])
