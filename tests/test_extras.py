"""The core install runs a campaign without the optional stacks, and a
command that needs an extra names it (issue 23: a light core install)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from xdoe._extras import install_command

ROOT = Path(__file__).resolve().parents[1]
#: modules of the extras, made unimportable in the subprocesses below
BLOCKED = ("pandas", "statsmodels", "matplotlib", "fastapi", "uvicorn", "jinja2", "plotly", "pyarrow", "torch",
           "stable_baselines3", "pettingzoo", "dask", "distributed", "psycopg", "alembic", "mako", "tensorboard",
           "mlflow")
DOCUMENT = """\
uid: lean
seed: 3
repetitions: 1
factors:
  n: {levels: [1, 2]}
definitions:
  environments: {d: {environment: {name: xdoe.environments:DummyEnvironment, uid: d, params: {}}}}
  agents:
    a: {name: a, brain: {name: xdoe.agents:DummyBrain, params: {}}, muscle: {name: xdoe.agents:DummyMuscle, params: {}},
        objective: {name: xdoe.agents:RewardObjective, params: {}}}
  simulation:
    v: {name: xdoe.simulation:VanillaSimController, conditions: [{name: xdoe.conditions:EnvironmentTerminationCondition, params: {}}]}
  phase_config:
    test: {mode: test, worker: "${n}", episodes: 3}
schedule:
  - testing: {environments: [[d]], agents: [[a]], simulation: [v], phase_config: [test]}
"""


#: a meta path finder that refuses the blocked modules as if they were not installed
_BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
from xdoe.cli._{app} import main
main({args!r})
"""


def _run(cwd: Path, app: str, *args: str) -> subprocess.CompletedProcess:
    code = _BLOCK.format(blocked=BLOCKED, app=app, args=list(args))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_core_dependencies_are_the_lean_core() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in project["dependencies"]}
    assert not names & {"pandas", "statsmodels", "matplotlib", "fastapi", "uvicorn", "jinja2", "plotly", "httpx",
                        "playwright", "torch", "alembic", "tensorboardx", "tensorboard", "mlflow", "mlflow-skinny"}
    assert {"analysis", "dashboard", "sb3", "pettingzoo", "postgres", "dask", "parquet", "migrate", "tensorboard",
            "mlflow", "all", "test"} <= set(project["optional-dependencies"])


def test_a_campaign_runs_without_the_extras_and_analysis_names_its_extra(tmp_path) -> None:
    (tmp_path / "lean.yaml").write_text(DOCUMENT, "utf-8")
    gen = _run(tmp_path, "xgen", "generate", "lean.yaml")
    assert gen.returncode == 0, gen.stderr
    runs = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "_outputs").glob("run-*.yaml"))
    start = _run(tmp_path, "xrun", "experiment-start", "--quiet", *runs)
    assert start.returncode == 0, start.stderr
    assert not list((tmp_path / "_outputs" / "results").rglob("laydown.svg"))  # drawn by the analysis extra only
    status = _run(tmp_path, "xrun", "status", "_outputs")
    assert status.returncode == 0, status.stderr
    results = _run(tmp_path, "xrun", "results", "_outputs")
    assert results.returncode == 2
    assert "needs the 'analysis' extra" in results.stderr and install_command("analysis") in results.stderr
    assert "Traceback" not in results.stderr
    # a log target names the extra that writes it, before anything runs (issue 36)
    logged = _run(tmp_path, "xrun", "experiment-start", "--quiet", "--log", "tensorboard:tb", *runs)
    assert logged.returncode == 2, logged.stderr
    assert "needs the 'tensorboard' extra" in logged.stderr and install_command("tensorboard") in logged.stderr
    exported = _run(tmp_path, "xrun", "export", "_outputs", "--to", "mlflow:mlruns")
    assert exported.returncode == 2, exported.stderr
    assert "needs the 'mlflow' extra" in exported.stderr and "Traceback" not in exported.stderr
    assert not (tmp_path / "tb").exists() and not (tmp_path / "mlruns").exists()


def test_the_install_hint_is_the_command_that_installs_the_extra_for_this_install() -> None:
    """xdoe is installed from a clone (``pip install -e .``, as the README
    says; it is not on PyPI yet): the hint ``pip install 'xdoe[optuna]'``
    failed with "No matching distribution found for xdoe" (or would install a
    stranger's package). The hint follows how xdoe was installed (PEP 610's
    ``direct_url.json``)."""
    from xdoe._extras import missing_extra

    editable = '{"dir_info": {"editable": true}, "url": "file:///home/me/my%20xdoe"}'
    assert install_command("optuna", editable) == "pip install -e '/home/me/my xdoe[optuna]'"
    local = '{"dir_info": {}, "url": "file:///src/xdoe"}'
    assert install_command("sb3", local) == "pip install '/src/xdoe[sb3]'"
    assert install_command("dask", None) == "pip install 'xdoe[dask]'"  # from an index
    assert install_command("dask", '{"url": "https://example.org/xdoe.whl", "archive_info": {}}') == \
        "pip install 'xdoe[dask]'"
    assert install_command("dask", "not json") == "pip install 'xdoe[dask]'"
    # this install: the folder it names holds the project
    command = install_command("optuna")
    assert command.endswith("[optuna]'") or command.endswith("[optuna]")
    err = ImportError("no optuna")
    err.name = "optuna"
    assert missing_extra(err).endswith(command)
