"""The documentation site (issue 36): every page is in mkdocs.yml's nav, the
README leads to it, the site builds with warnings as errors (a broken link,
anchor or reference fails it), and the tutorial notebook runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav names, in order (``docs/``-relative)."""
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    nav = text.split("\nnav:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r":\s+(\S+\.md)\s*$", nav, flags=re.M)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    pages = _nav_pages()
    assert len(pages) == len(set(pages))
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(pages) == on_disk
    for doc in sorted(DOCS.glob("*.md")):  # the pages other files name by path stay where they are
        assert doc.name in pages, doc.name


def test_readme_leads_to_the_site_and_the_quick_start_checks() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "(docs/index.md)" in readme
    assert "(docs/getting-started/tutorial.md)" in readme
    assert "mkdocs serve" in readme
    for target in re.findall(r"\]\(((?:docs/|[A-Z]+\.md|LICENSE)[^)#]*)", readme):
        assert (ROOT / target).exists(), target
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "xrun experiment-check" in quick
    assert "run the same two commands again" in quick
    assert len(readme.splitlines()) <= 160


def test_readme_test_command_is_what_ci_runs() -> None:
    """The README's test block installs CPU torch and then runs the line that
    .ci/run runs, word for word."""
    readme = (ROOT / "README.md").read_text("utf-8")
    block = readme.split("## Tests", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert block[0].startswith("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    ci = (ROOT / ".ci" / "run").read_text("utf-8").rstrip().splitlines()[-1]
    assert block[1] == ci == 'pip install -q -e ".[test]" && python -m pytest -q'


def _env() -> dict[str, str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


@pytest.mark.slow
def test_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    site = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                             "-d", str(site)], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text("utf-8")
    assert "experiment-start" in cli and "--dry-run" in cli  # generated from click
    api = (site / "reference" / "api" / "index.html").read_text("utf-8")
    assert "xdoe.results.load" in api and "xdoe.analysis.analyze" in api  # generated from the docstrings
    schema = (site / "reference" / "experiment-document" / "index.html").read_text("utf-8")
    assert "<code>max_total_runs</code>" in schema and "ExperimentFactor" in schema  # generated from xgen schema
    assert (site / "tutorial.ipynb").is_file()
    assert (site / "contributing" / "index.html").read_text("utf-8").count("Contributing to xdoe") >= 1


@pytest.mark.slow
def test_tutorial_notebook_runs(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(DOCS / "tutorial.ipynb", as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")  # kept without outputs
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _env()["PYTHONPATH"]  # the kernel imports this checkout's xdoe
    try:
        nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("tiny-taxi" in h and "testing:objective:mean" in h for h in html)  # the Analysis, as HTML
    assert any("runs: Design points ranked by IQM" in h and "tiny-taxi" in h for h in html)  # the results table
    assert "'agent': 'learner'" in outputs[-1]["data"]["text/plain"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xdoe-tutorial"]  # it wrote only here
    assert (tmp_path / "xdoe-tutorial" / "xrun.sqlite").is_file()


@pytest.mark.parametrize("prog", ["xgen", "xrun"])
def test_shell_completion_as_documented(prog: str) -> None:
    """The install page's completion lines name the entry points' variables,
    and click answers them with a completion script."""
    from click.testing import CliRunner

    from xdoe.cli._xgen import main as xgen
    from xdoe.cli._xrun import main as xrun

    install = (DOCS / "getting-started" / "install.md").read_text("utf-8")
    variable = f"_{prog.upper()}_COMPLETE"
    assert f'eval "$({variable}=bash_source {prog})"' in install
    assert f"{prog} = " in (ROOT / "pyproject.toml").read_text("utf-8")  # the entry point the variable is named after
    result = CliRunner().invoke({"xgen": xgen, "xrun": xrun}[prog], [], prog_name=prog, env={variable: "bash_source"})
    assert result.exit_code == 0 and f"_{prog}_completion()" in result.output, result.output
