"""Help texts and hints that fix the mistake (issue 9)."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main as xgen_main
from xdoe.cli._xrun import main as xrun_main

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "experiments" / "dummy.yaml"


def _helps(group: click.Group) -> dict[str, str]:
    runner = CliRunner()
    out = {"": runner.invoke(group, ["--help"], terminal_width=80).output}
    for name in group.commands:
        out[name] = runner.invoke(group, [name, "--help"], terminal_width=80).output
    return out


@pytest.mark.parametrize("group", [xrun_main, xgen_main], ids=["xrun", "xgen"])
def test_help_has_no_cut_summary_and_no_rest_markup(group: click.Group) -> None:
    helps = _helps(group)
    for name, text in helps.items():
        assert "Usage:" in text, name
        assert "``" not in text, f"raw reST in `{name} --help`"
    listing = helps[""].split("Commands:", 1)[1]
    assert "..." not in listing, listing  # click cuts long first sentences with "..."
    for name, command in group.commands.items():
        summary = command.get_short_help_str(limit=200)
        assert " ".join(summary.split()) in " ".join(listing.split()), name


def test_docs_name_every_page_and_the_check_command() -> None:
    """The README leads to the site (tests/test_docs_site.py: every page is in
    mkdocs.yml's nav); the site's home page links every page of docs/, and the
    quick start names the check command."""
    index = (ROOT / "docs" / "index.md").read_text()
    for doc in sorted((ROOT / "docs").rglob("*.md")):
        name = str(doc.relative_to(ROOT / "docs"))
        if name != "index.md":
            assert f"]({name})" in index, name
    readme = (ROOT / "README.md").read_text()
    assert "(docs/index.md)" in readme
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "xrun experiment-check" in quick


def test_xrun_on_an_experiment_document_says_run_xgen_first(tmp_path: Path) -> None:
    for command in (["experiment-check"], ["experiment-start", "--store", f"sqlite:///{tmp_path / 's.sqlite'}"]):
        result = CliRunner().invoke(xrun_main, [*command, str(DUMMY)])
        assert result.exit_code == 2
        assert f"this is an experiment document: run `xgen generate {DUMMY}` first" in result.output
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a store


def test_xgen_on_a_run_document_says_run_xrun(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert CliRunner().invoke(xgen_main, ["generate", str(DUMMY), "-o", str(out), "-q"]).exit_code == 0
    run_file = out / "run-dummy-study-0000.yaml"
    result = CliRunner().invoke(xgen_main, ["check", str(run_file)])
    assert result.exit_code == 2
    assert f"this is a run document: run it with `xrun experiment-start {run_file}`" in result.output


def test_experiment_start_accepts_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert CliRunner().invoke(xgen_main, ["generate", str(DUMMY), "-o", str(out), "-q"]).exit_code == 0
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    result = CliRunner().invoke(xrun_main, ["experiment-start", "--quiet", "--store", url,
                                            "--results", str(tmp_path / "results"), str(out)])
    assert result.exit_code == 0, result.output
    again = CliRunner().invoke(xrun_main, ["status", "--store", url, str(out), "--quiet"])
    assert again.exit_code == 0 and re.search(r"16 finished", again.output), again.output
    empty = tmp_path / "empty"
    empty.mkdir()
    none = CliRunner().invoke(xrun_main, ["experiment-start", "--store", url, str(empty)])
    assert none.exit_code == 2 and "holds no run files (run-*.yaml)" in none.output


@pytest.mark.parametrize(("group", "args", "line"), [
    ("xrun", ["experiment-start", "--run-timeout", "1e-12", "x.yaml"],
     "error: --run-timeout: 1e-12 is not in the range x>=0.001 (see 'xrun experiment-start --help')"),
    ("xrun", ["experiment-start"], "error: Missing argument 'FILES...' (see 'xrun experiment-start --help')"),
    ("xrun", ["nosuch"], "error: No such command 'nosuch' (see 'xrun --help')"),
    ("xgen", ["generate", "--bogus", str(DUMMY)], "error: No such option '--bogus' (see 'xgen generate --help')"),
    ("xgen", ["generat"], "error: No such command 'generat'"),
], ids=["range", "missing", "command", "option", "close-command"])
def test_a_usage_error_is_one_line_and_exit_2(group: str, args: list[str], line: str) -> None:
    """A usage error reads as every other refusal: one ``error:`` line, exit 2."""
    result = CliRunner().invoke({"xrun": xrun_main, "xgen": xgen_main}[group], args, prog_name=group)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), result.stderr
