"""Commands import only what they need (start-up time, issue 16): checked on
``sys.modules`` in a fresh interpreter after the command ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
DUMMY = ROOT / "experiments" / "dummy.yaml"  # a full factorial

LOADED = """
import sys
from xdoe.cli.{module} import main
try:
    main(sys.argv[2:])
except SystemExit as exc:
    assert not exc.code, exc.code
heavy = {heavy!r}
print(",".join(sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy)) or "clean")
"""


def _loaded(module: str, heavy: tuple[str, ...], *args: str, cwd: Path) -> str:
    code = LOADED.format(module=module, heavy=heavy)
    proc = subprocess.run([sys.executable, "-c", code, "-", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_xgen_on_a_full_factorial_never_loads_scipy(tmp_path: Path) -> None:
    # nor the run-document models (pydantic classes built for xrun), the executor or the store
    heavy = ("scipy", "sqlalchemy", "gymnasium", "pandas", "matplotlib", "torch", "xdoe.documents._run",
             "xdoe.execution", "xdoe.store")
    # numpy is loaded (every run seed comes from its SeedSequence, the manifest figures from its sums),
    # scipy is not: a full factorial's figures come in closed form
    assert _loaded("_xgen", heavy, "check", str(DUMMY), cwd=tmp_path) == "clean"
    assert _loaded("_xgen", heavy, "generate", str(DUMMY), "--dry-run", "-o", str(tmp_path / "o"),
                   cwd=tmp_path) == "clean"
    assert _loaded("_xgen", heavy, "generate", str(DUMMY), "-q", "-o", str(tmp_path / "o"), cwd=tmp_path) == "clean"
    assert (tmp_path / "o" / "manifest.json").is_file()


def test_import_design_loads_no_scipy() -> None:
    code = "import sys, xdoe.design; print(sorted(m for m in sys.modules if m.startswith(('scipy', 'xdoe.design.'))))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_experiment_start_loads_no_analysis_stack(tmp_path: Path) -> None:
    run = {
        "uid": "one-step", "seed": 3,
        "schedule": [{"training": {
            "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
                                              "params": {"length": 1}}}],
            "agents": [{"name": "random", "brain": {"name": "xdoe.agents:DummyBrain"},
                        "muscle": {"name": "xdoe.agents:DummyMuscle"},
                        "objective": {"name": "xdoe.agents:RewardObjective"}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController"},
            "phase_config": {"mode": "train", "episodes": 1}}}],
    }
    path = tmp_path / "run.yaml"
    with open(path, "w") as fh:
        YAML().dump(run, fh)
    # nor SQLAlchemy's ORM: the run path records through Core tables (xdoe.store.schema._tables)
    heavy = ("pandas", "statsmodels", "torch", "scipy", "rich", "dask", "pyarrow", "psycopg", "stable_baselines3",
             "psutil", "sqlalchemy.orm", "xdoe.store.schema._models", "xdoe.tracking", "tensorboard", "mlflow")
    store = ("--store", f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r"))
    got = _loaded("_xrun", heavy, "experiment-start", str(path), "--quiet", *store, cwd=tmp_path)
    assert got == "clean"
    # in this process (--in-process): matplotlib only to draw a structure not drawn before; no process
    # pool or Dask backend (the one backend chosen is imported), no samplers when no parameter has one
    heavy = (*heavy, "matplotlib", "xdoe.campaign.backends._pool", "xdoe.campaign.backends._dask",
             "concurrent.futures.process", "xdoe._plugins._samplers")
    assert _loaded("_xrun", heavy, "experiment-start", str(path), "--quiet", "--in-process", "--rerun", *store,
                   cwd=tmp_path) == "clean"
    # logged (issue 36): the trackers' libraries load in the run's process only, never in xrun's
    import importlib.util

    if importlib.util.find_spec("tensorboard") and importlib.util.find_spec("mlflow"):
        log = ("--log", f"tensorboard:{tmp_path / 'tb'}", "--log", f"mlflow:file://{tmp_path / 'mlruns'}")
        assert _loaded("_xrun", ("mlflow", "torch", "tensorboard"), "experiment-start", str(path),
                       "--quiet", "--no-laydown", *log, "--store", f"sqlite:///{tmp_path / 'logged.sqlite'}",
                       "--results", str(tmp_path / "logged"), cwd=tmp_path) == "clean"
        assert list((tmp_path / "tb").rglob("events.out.tfevents.*")) and (tmp_path / "mlruns").is_dir()
        # and in the run's process TensorBoard's writer comes without torch (tensorboardX's would import it)
        assert _loaded("_xrun", ("torch", "tensorflow"), "experiment-start", str(path), "--quiet", "--no-laydown",
                       "--in-process", "--rerun", "--log", f"tensorboard:{tmp_path / 'tb'}", "--store",
                       f"sqlite:///{tmp_path / 'logged.sqlite'}", "--results", str(tmp_path / "logged"),
                       cwd=tmp_path) == "clean"
    assert len(list((tmp_path / "r").glob("one-step/*/laydown.svg"))) == 2
    assert _loaded("_xrun", heavy, "experiment-start", str(path), "--quiet", "--in-process", "--rerun",
                   "--no-laydown", "--store", f"sqlite:///{tmp_path / 's2.sqlite'}", "--results",
                   str(tmp_path / "r2"), cwd=tmp_path) == "clean"
    assert not list((tmp_path / "r2").glob("*/*/laydown.svg"))


def test_a_generated_run_reads_its_manifest_without_the_experiment_models(tmp_path: Path) -> None:
    """The run records its design from the manifest beside its file: that reads
    JSON and names files; it builds none of the experiment document's pydantic
    models (xgen's, ~0.05 s of a one-step run's start-up)."""
    assert _loaded("_xgen", (), "generate", str(DUMMY), "-q", "-o", str(tmp_path / "o"), cwd=tmp_path) == "clean"
    first = sorted((tmp_path / "o").glob("run-*.yaml"))[0]
    heavy = ("xdoe.documents._experiment_models", "xdoe.documents._experiment", "xdoe.design")
    assert _loaded("_xrun", heavy, "experiment-start", str(first), "--quiet", "--in-process", "--no-laydown",
                   "--store", f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r"),
                   cwd=tmp_path) == "clean"
    from xdoe.store import Store

    with Store(f"sqlite:///{tmp_path / 's.sqlite'}", read_only=True) as store:  # the design was recorded
        assert store.runs.experiment_design("dummy-study") is not None


def _check_with(tmp_path: Path, variable: str, given: str | None, printed: str) -> str:
    """The last line ``xgen check`` of the dummy document leaves after it
    prints ``printed`` (an expression), with environment ``variable`` set to
    ``given`` (``None``: unset)."""
    code = ("import os, sys\nfrom xdoe.cli._xgen import main\ntry:\n    main(sys.argv[1:])\n"
            f"except SystemExit as exc:\n    assert not exc.code, exc.code\nprint({printed})")
    env = {k: v for k, v in os.environ.items() if k != variable}
    if given is not None:
        env[variable] = given
    proc = subprocess.run([sys.executable, "-c", code, "check", str(DUMMY)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_xgen_starts_numpy_without_a_blas_thread_pool(tmp_path: Path) -> None:
    """OpenBLAS's threads cost more start-up CPU than xgen's small arrays gain;
    a value the user set is kept."""
    for given, expected in ((None, "1"), ("3", "3")):
        printed = "os.environ.get('OPENBLAS_NUM_THREADS')"
        assert _check_with(tmp_path, "OPENBLAS_NUM_THREADS", given, printed) == expected


def test_document_models_parse_no_text_signature() -> None:
    """A builtin ``default_factory`` (``list``) makes pydantic parse its text
    signature with tokenize, whose patterns cost ~10 ms to compile."""
    code = ("import tokenize, xdoe.documents._experiment, xdoe.documents._run\n"
            "compiled = getattr(tokenize, '_compile', None)  # Python < 3.12: patterns compiled on first use\n"
            "print(compiled.cache_info().misses if compiled is not None else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"


def test_xgen_as_the_program_pauses_the_garbage_collector_only_while_loading(tmp_path: Path) -> None:
    """Run as the program, xgen loads with the cyclic collector off and then
    freezes what loading made; the collector is on again afterwards, also
    when the document is refused. Called as a function, it leaves the
    caller's collector alone."""
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('collector', gc.isenabled(), gc.get_freeze_count() > 0))\n"
            "from xdoe.cli._xgen import main\n"
            "main()")
    bad = tmp_path / "bad.yaml"
    bad.write_text("uid: x\nschedule: []\n", encoding="utf-8")
    for document, code_expected in ((DUMMY, 0), (bad, 2)):
        proc = subprocess.run([sys.executable, "-c", code, "check", str(document)], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
        assert proc.returncode == code_expected, proc.stderr
        assert proc.stdout.strip().splitlines()[-1] == "collector True True"
    code = ("import gc, sys\n"
            "from xdoe.cli._xgen import main\n"
            "frozen = gc.get_freeze_count()\n"
            "try:\n    main(['check', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print('collector', gc.isenabled(), gc.get_freeze_count() == frozen)")
    proc = subprocess.run([sys.executable, "-c", code, str(DUMMY)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.stdout.strip().splitlines()[-1] == "collector True True", proc.stderr


def test_xgen_builds_its_models_without_looking_for_pydantic_plugins(tmp_path: Path) -> None:
    """Looking for plugins reads every installed distribution's entry points;
    the variable that skips it is set only while the document loads (a value
    the user set is kept), so the user's models would still get their plugins."""
    printed = ("os.environ.get('PYDANTIC_DISABLE_PLUGINS'), "
               "__import__('pydantic.plugin._loader').plugin._loader._plugins is None")  # None: never looked
    for given, expected in ((None, "None True"), ("some_plugin", "some_plugin False")):
        assert _check_with(tmp_path, "PYDANTIC_DISABLE_PLUGINS", given, printed) == expected


def test_xrun_loads_its_documents_without_pydantic_plugins_and_the_collector_paused(tmp_path: Path) -> None:
    """As xgen: xrun, run as the program, builds xdoe's document models
    without looking for pydantic plugins (the variable restored afterwards)
    and loads with the cyclic collector off, on again (what loading made
    frozen) once the campaign constructs the user's components."""
    assert _loaded("_xgen", (), "generate", str(DUMMY), "-q", "-o", str(tmp_path / "o"), cwd=tmp_path) == "clean"
    first = sorted((tmp_path / "o").glob("run-*.yaml"))[0]
    code = ("import atexit, gc, os, sys\n"
            "seen = []\n"
            "import xdoe.execution._preflight as preflight\n"  # the checks construct the user's components
            "checks = preflight.preflight\n"
            "def spy(*args, **kwargs):\n"
            "    seen.append(gc.isenabled())\n"
            "    return checks(*args, **kwargs)\n"
            "import xdoe.execution\n"
            "xdoe.execution.preflight = spy\n"
            "atexit.register(lambda: print('collector', seen, gc.isenabled(), gc.get_freeze_count() > 0,\n"
            "    os.environ.get('PYDANTIC_DISABLE_PLUGINS'),\n"
            "    __import__('pydantic.plugin._loader').plugin._loader._plugins is None))\n"
            "from xdoe.cli._xrun import main\n"
            "main()")
    args = ["experiment-start", str(first), "--quiet", "--in-process", "--no-laydown", "--store",
            f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r")]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "collector [True] True True None True"
