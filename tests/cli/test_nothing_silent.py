"""Nothing silent (issue 33.2), through the real command lines: a key a few
edits from a key valid at its place is an error with "did you mean" (exit 2,
nothing written) in every mode and every command that reads the document
(``xgen check``, ``generate``, ``augment``, ``xrun experiment-check``); other
unknown keys warn, and ``--strict`` refuses them with the closest valid key; a
``run_config`` written as named definitions is refused with the shape it must
have; a ``when:`` typo is answered from the factors the document names."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun

ROOT = Path(__file__).resolve().parents[2]
DUMMY = (ROOT / "experiments" / "dummy.yaml").read_text(encoding="utf-8")
POWERGRID = (Path(__file__).resolve().parent / "palaestrai" / "minimal_powergrid_run.yml").read_text(encoding="utf-8")
RUN_CONFIG = "  run_config:\n    condition: {name: xdoe.conditions:MaxEpisodesTerminationCondition, params: {}}\n"
NAMED_RUN_CONFIG = ("  run_config:\n    c:\n      timeout: 4\n"
                    "      condition: {name: xdoe.conditions:MaxEpisodesTerminationCondition, params: {}}\n")


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _one_error(result: Result, *fragments: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if not line.startswith("warning: ")]
    assert len(errors) == 1 and errors[0].startswith("error: "), result.output
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*"))


#: (case, document text, key path and line, did you mean)
XGEN_TYPOS = [
    ("repetitions", _edit(DUMMY, "repetitions: 2", "repetitons: 2"), "doc.yaml:11: repetitons:", "'repetitions'"),
    ("phase_config", _edit(DUMMY, "{mode: train, worker: 1, episodes: 3}", "{mode: train, worker: 1, episdoes: 3}"),
     "definitions.phase_config.train.episdoes:", "'episodes'"),
    ("factor_spec", _edit(DUMMY, "length: {levels: [5, 10]}", "length: {level: [5, 10], levels: [5, 10]}"),
     "factors.length.level:", "'levels'"),
    ("brain", _edit(DUMMY, "brain:", "brian: {name: x}\n      brain:"), ".brian:", "'brain'"),
    ("run_config", _edit(DUMMY, RUN_CONFIG, RUN_CONFIG + "    timout: 4\n"), "definitions.run_config.timout:",
     "'timeout'"),
    ("schedule_key", _edit(DUMMY, "      phase_config: [train]", "      phase_confg: [train]\n      phase_config: [train]"),
     ".phase_confg:", "'phase_config'"),
    # short keys with two letters swapped or one doubled: one edit, though difflib finds them far apart (session 8)
    ("seed_swapped", _edit(DUMMY, "seed: 42", "sede: 42"), "doc.yaml:8: sede:", "'seed'"),
    ("mode_swapped", _edit(DUMMY, "test: {mode: test,", "test: {moed: test,"), "definitions.phase_config.test.moed:",
     "'mode'"),
    ("agent_name_swapped", _edit(DUMMY, "      name: random\n", "      naem: random\n"),
     "definitions.agents.random.naem:", "'name'"),
    ("uid_doubled", _edit(DUMMY, "        uid: env\n", "        uidd: env\n"),
     "definitions.environments.small.environment.uidd:", "'uid'"),
    ("checkpoint_every", _edit(DUMMY, "{mode: train, worker: 1, episodes: 3}",
                               "{mode: train, worker: 1, episodes: 3, checkpoint_evry: 100}"),
     "definitions.phase_config.train.checkpoint_evry:", "'checkpoint_every'"),
    ("when_swapped", _edit(DUMMY, "length: {levels: [5, 10]}", "length: {levels: [5, 10], whne: {length: [5]}}"),
     "factors.length.whne:", "'when'"),
]


_COMMANDS = [pytest.param(c, s, id=f"{c}-{'strict' if s else 'default'}") for c in ("check", "generate", "augment")
             for s in ([], ["--strict"]) if not (c == "augment" and s)]  # augment has no --strict


@pytest.mark.parametrize(("command", "strict"), _COMMANDS)
@pytest.mark.parametrize(("case", "text", "where", "meant"), XGEN_TYPOS, ids=[c[0] for c in XGEN_TYPOS])
def test_a_typo_is_an_error_in_every_xgen_command(case: str, text: str, where: str, meant: str, command: str,
                                                  strict: list[str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    before = _files(tmp_path)
    args = {"check": [], "generate": ["-o", str(tmp_path / "out")], "augment": ["--add", "2"]}[command]
    result = CliRunner().invoke(xgen, [command, str(path), *args, *strict])
    _one_error(result, where.replace("doc.yaml", str(path)) if where.startswith("doc.yaml") else where,
               f"did you mean {meant}?")
    assert _files(tmp_path) == before, "something was written"


def test_other_unknown_keys_warn_and_strict_refuses_them(tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text(_edit(DUMMY, "repetitions: 2\n", "repetitions: 2\ncomment: a note\nrepetition_note: x\n"),
                    encoding="utf-8")
    result = CliRunner().invoke(xgen, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "unknown key 'comment'" in result.output and "unknown key 'repetition_note'" in result.output
    strict = CliRunner().invoke(xgen, ["check", str(path), "--strict"])
    _one_error(strict, f"{path}:12: comment: unknown key 'comment'", "--strict")
    path.write_text(_edit(DUMMY, "repetitions: 2\n", "repetitions: 2\nrepetition_note: x\n"), encoding="utf-8")
    strict = CliRunner().invoke(xgen, ["check", str(path), "--strict"])
    _one_error(strict, "unknown key 'repetition_note'; did you mean 'repetitions'?")  # the same suggestion


@pytest.mark.parametrize("command", ["check", "generate"])
def test_a_named_run_config_is_refused_with_its_shape(command: str, tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text(_edit(DUMMY, RUN_CONFIG, NAMED_RUN_CONFIG), encoding="utf-8")
    args = ["-o", str(tmp_path / "out")] if command == "generate" else ["--strict"]
    result = CliRunner().invoke(xgen, [command, str(path), *args])
    _one_error(result, f"{path}:46: definitions.run_config:", "run_config is one mapping {condition:",
               "timeout: seconds, log: [tensorboard:DIR, mlflow:URI]}", "'c' holds condition, timeout")
    assert not (tmp_path / "out").exists()


def test_a_when_typo_is_answered_from_the_factors_written(tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    text = _edit(DUMMY, "length: {levels: [5, 10]}", "length: {levels: [5, 10], when: {environmnts: [small]}}")
    path.write_text(_edit(text, "environments: [[small], [large]]", "environments: {name: environments, levels: "
                          "[[small], [large]]}"), encoding="utf-8")
    message = _one_error(CliRunner().invoke(xgen, ["check", str(path)]), "factors.length.when.environmnts:",
                         "did you mean 'environments'?")
    assert "0.sensors" not in message and "0.environments" not in message  # no internal names
    path.write_text(_edit(DUMMY, "length: {levels: [5, 10]}", "length: {levels: [5, 10], when: {sensor: [a]}}"),
                    encoding="utf-8")
    message = _one_error(CliRunner().invoke(xgen, ["check", str(path)]), "when: unknown factor 'sensor'")
    assert "0.sensors.random" not in message and "did you mean" not in message


#: run documents: (case, text, where, did you mean)
XRUN_TYPOS = [
    ("seed", _edit(POWERGRID, "seed: 7", "sed: 7"), "sed:", "'seed'"),
    ("phase_config", _edit(POWERGRID, "episodes: 2}", "episdoes: 2}"), "phase_config.episdoes:", "'episodes'"),
    ("agent", _edit(POWERGRID, "          sensors: [midas", "          sensor: [midas_powergrid.0]\n          sensors: [midas"),
     "agents[0].sensor:", "'sensors'"),
    ("run_config", _edit(POWERGRID, "run_config:\n", "run_config:\n  timout: 4\n"), "run_config.timout:", "'timeout'"),
]


@pytest.mark.parametrize("command", ["experiment-check", "experiment-start"])
@pytest.mark.parametrize(("case", "text", "where", "meant"), XRUN_TYPOS, ids=[c[0] for c in XRUN_TYPOS])
def test_a_typo_in_a_run_document_is_an_error(case: str, text: str, where: str, meant: str, command: str,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "run.yml"
    path.write_text(text, encoding="utf-8")
    before = _files(tmp_path)
    extra = ["--store", f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r")] \
        if command == "experiment-start" else []
    _one_error(CliRunner().invoke(xrun, [command, str(path), *extra]), where, f"did you mean {meant}?")
    assert _files(tmp_path) == before, "something was written"


def test_a_named_run_config_in_a_run_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.yml"
    path.write_text(_edit(POWERGRID, "run_config:\n", "run_config:\n  c:\n    timeout: 4\n"), encoding="utf-8")
    _one_error(CliRunner().invoke(xrun, ["experiment-check", str(path)]), f"{path}:", "run_config:",
               "run_config is one mapping", "'c' holds timeout")


def test_an_unknown_run_document_key_warns(tmp_path: Path) -> None:
    path = tmp_path / "run.yml"
    path.write_text(_edit(POWERGRID, "seed: 7", "seed: 7\nnotes: from the tutorial"), encoding="utf-8")
    result = CliRunner().invoke(xrun, ["experiment-check", str(path)])
    assert result.exit_code == 0, result.output
    assert f"warning: {path}:9: notes: unknown key 'notes'" in result.output


#: (case, document text, fragment of the one error line): inputs that xgen used to accept and turn into
#: a different study without a word (session 8's mutation sweep of experiments/*.yaml)
SILENT_CHANGES = [
    # a run condition whose name moved one level up: the condition was dropped, the phase never ended by it
    ("condition_name_moved_up", _edit(DUMMY, RUN_CONFIG, "  run_config:\n    name: xdoe.conditions:MaxEpisodesTerminationCondition\n"
                                             "    condition: {params: {}}\n"),
     "definitions.run_config.condition: required key 'name' missing"),
    ("condition_params_without_name", _edit(DUMMY, RUN_CONFIG, "  run_config:\n    condition: {name: '', params: {a: 1}}\n"),
     "params given but the name is empty"),
    ("reward_without_name", _edit(DUMMY, "        params: {length: \"${length}\", sensors: 3, actuators: 2}\n",
                                  "        params: {length: \"${length}\", sensors: 3, actuators: 2}\n"
                                  "      reward: {params: {scale: 2}}\n"),
     "definitions.environments.small.reward: required key 'name' missing"),
    # the environment uid left out (it defaults to the definition key, 'small'): the sets naming 'env' gave
    # the agent no sensors and no actuators in the design points with 'small'
    ("environment_uid_missing", _edit(DUMMY, "        uid: env\n", ""),
     "agent 'random' gets no sensor and no actuator in phase 'training': its sets 'first_two' and 'both' name "
     "environment uid(s) 'env', and the phase's environments have 'small'"),
    ("sensor_listed_twice", _edit(DUMMY, "first_two: {env: [0, 1]}", "first_two: {env: [0, env.0]}"),
     "definitions.sensors.first_two.env: sensor set 'first_two' lists 'env.0' twice"),
]


@pytest.mark.parametrize("command", ["check", "generate"])
@pytest.mark.parametrize(("case", "text", "fragment"), SILENT_CHANGES, ids=[c[0] for c in SILENT_CHANGES])
def test_an_input_that_would_change_the_study_is_refused(case: str, text: str, fragment: str, command: str,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    before = _files(tmp_path)
    _one_error(CliRunner().invoke(xgen, [command, str(path)]), fragment)
    assert _files(tmp_path) == before, "something was written"


def test_a_component_named_empty_still_means_none(tmp_path: Path) -> None:
    """arsenAI's way of writing "no reward" stays accepted: ``{name: "", params: {}}``, ``{name: null}``, ``{}``."""
    for none in ('{name: "", params: {}}', "{name: null}", "{}"):
        path = tmp_path / "doc.yaml"
        path.write_text(_edit(DUMMY, RUN_CONFIG, f"  run_config:\n    condition: {none}\n"), encoding="utf-8")
        result = CliRunner().invoke(xgen, ["check", str(path)])
        assert result.exit_code == 0, result.output


def test_a_run_document_that_cannot_be_built_leaves_no_output_folders(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Run documents are built while they are written: an error found then (two environments with one uid in a
    phase) removed the staging folder but left the output's parent folders that generate had created."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "doc.yaml"
    path.write_text(_edit(DUMMY, "environments: [[small], [large]]", "environments: [[small, large]]"), encoding="utf-8")
    before = _files(tmp_path)
    _one_error(CliRunner().invoke(xgen, ["generate", str(path), "-o", str(tmp_path / "a" / "b" / "out")]),
               "two environments with uid 'env'")
    assert _files(tmp_path) == before, "something was written"


@pytest.mark.parametrize(("case", "text", "where"), [
    ("phase_config", _edit(DUMMY, "{mode: test, worker: 1, episodes: 2}", "{mode: test, worker: 1, episodes: 2, eval: 5}"),
     "definitions.phase_config.test.eval: unknown key 'eval'"),
    ("run_config", _edit(DUMMY, RUN_CONFIG, RUN_CONFIG + "    notes: 3\n"),
     "definitions.run_config.notes: unknown key 'notes'"),
])
def test_an_unknown_key_of_phase_config_or_run_config_is_not_passed_through_in_silence(
        case: str, text: str, where: str, tmp_path: Path) -> None:
    """``phase_config`` and ``run_config`` passed any key through without a word, though nothing read it."""
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(xgen, ["check", str(path)])
    assert result.exit_code == 0 and f"warning: {path}" in result.output and where in result.output, result.output
    _one_error(CliRunner().invoke(xgen, ["check", str(path), "--strict"]), where)
    path.write_text(_edit(DUMMY, "{mode: train, worker: 1, episodes: 3}",
                          "{mode: train, worker: 1, episodes: 3, checkpoint_every: 10, keep_checkpoints: 2, "
                          "best_window: 5}"), encoding="utf-8")
    known = CliRunner().invoke(xgen, ["check", str(path), "--strict"])
    assert known.exit_code == 0 and "warning" not in known.output, known.output


def test_simulation_params_are_read_so_they_are_no_unknown_key(tmp_path: Path) -> None:
    """The executor passes ``simulation.params`` to the controller; xgen called them unknown ("xdoe does not use
    it") and ``--strict`` refused a valid document."""
    path = tmp_path / "doc.yaml"
    path.write_text(_edit(DUMMY, "      name: xdoe.simulation:VanillaSimController\n",
                          "      name: xdoe.simulation:VanillaSimController\n      params: {}\n"), encoding="utf-8")
    result = CliRunner().invoke(xgen, ["check", str(path), "--strict"])
    assert result.exit_code == 0 and "warning" not in result.output, result.output


LEVELS = "length: {levels: [5, 10]}"


@pytest.mark.parametrize(("case", "text", "fragment"), [
    ("named", _edit(DUMMY, LEVELS, "length: {levels: [5, 10, 5.0, 5]}"),
     "factors.length.levels[3]: factor 'length' lists level 5 twice"),
    ("schedule", _edit(DUMMY, "environments: [[small], [large]]", "environments: [[small], [large], [small]]"),
     "schedule[0].training.environments[2]: level ['small'] of environments is listed twice"),
    ("set", _edit(DUMMY, "[first_two, first_three]", "[first_two, first_two]"),
     "schedule[0].training.sensors.random[1]: level 'first_two' of sensors of 'random' is listed twice"),
    ("range_bool", _edit(DUMMY, LEVELS, "length: {range: [1, true], integer: true}"),
     "factors.length.range[1]: Input should be a valid number (got True)"),
    ("range_string", _edit(DUMMY, LEVELS, "length: {range: ['1', 9], integer: true}"),
     "factors.length.range[0]: Input should be a valid number (got '1')"),
    ("integer_string", _edit(DUMMY, LEVELS, "length: {range: [1, 9], integer: 'no'}"),
     "factors.length.integer: Input should be a valid boolean (got 'no')"),
])
def test_a_level_listed_twice_or_a_number_of_another_type_is_refused(case: str, text: str, fragment: str,
                                                                      tmp_path: Path) -> None:
    """A level listed twice ran twice as often in every design; ``range: [1, true]`` was read as [1.0, 1.0] and
    ``integer: 'no'`` a word read as a boolean: each changed the study without a word."""
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    _one_error(CliRunner().invoke(xgen, ["check", str(path)]), fragment)


def test_levels_of_mixed_kinds_warn(tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text(_edit(DUMMY, LEVELS, "length: {levels: [5, '10']}"), encoding="utf-8")
    result = CliRunner().invoke(xgen, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert (f"warning: {path}:14: factors.length.levels: factor 'length' mixes kinds of levels: 5 (a number), "
            "'10' (a string)") in result.output


@pytest.mark.parametrize("command", ["experiment-check", "experiment-start"])
def test_a_run_document_edited_after_xgen_wrote_it_is_refused(command: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A param changed by hand in a generated run document (``length: 5`` -> ``7``) ran, and every analysis
    listed its results under the design point's ``length=5`` (a wrong answer without a word). The manifest
    records each file's sha256; a file that no longer has it is refused, the others of the folder still run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.yaml").write_text(DUMMY, encoding="utf-8")
    assert CliRunner().invoke(xgen, ["generate", "doc.yaml", "-o", "out", "-q"]).exit_code == 0
    run = tmp_path / "out" / "run-dummy-study-0000.yaml"
    run.write_text(run.read_text(encoding="utf-8").replace("              length: 5", "              length: 7"),
                   encoding="utf-8")
    before = _files(tmp_path)
    extra = ["--store", f"sqlite:///{tmp_path / 's.sqlite'}", "--results", str(tmp_path / "r"), "--no-laydown"] \
        if command == "experiment-start" else []
    target = "out" if command == "experiment-start" else f"out/{run.name}"  # check prints "ok" for the others
    _one_error(CliRunner().invoke(xrun, [command, target, *extra]),
               f"out/{run.name}:1: changed since xgen wrote it (its sha256 is not the one manifest.json records)")
    assert _files(tmp_path) == before, "something was written"
    unchanged = CliRunner().invoke(xrun, ["experiment-check", "out/run-dummy-study-0001.yaml"])
    assert unchanged.exit_code == 0, unchanged.output


def test_the_edit_check_reads_each_folders_manifests_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check of hand edits reads a folder's manifests once for all its files (it read and scanned them
    once per file: 8 s for 4,096 run files, quadratic in the campaign)."""
    import xdoe._files as files

    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.yaml").write_text(DUMMY, encoding="utf-8")
    assert CliRunner().invoke(xgen, ["generate", "doc.yaml", "-o", "out", "-q"]).exit_code == 0
    runs = sorted((tmp_path / "out").glob("run-*.yaml"))
    assert len(runs) > 1
    runs[1].write_text(runs[1].read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    listed = []
    real = files._manifest_paths
    monkeypatch.setattr(files, "_manifest_paths", lambda folder: listed.append(folder) or real(folder))
    assert list(files.changed_since_written(runs)) == [str(runs[1])]
    assert listed == [tmp_path / "out"]


@pytest.mark.parametrize("command", [
    ["xgen", "generate", "doc.yaml", "--dry-run", "-o", "LONG"],
    ["xgen", "augment", "doc.yaml", "--add", "2", "-o", "LONG"],
    ["xrun", "status", "--store", "sqlite:///LONG.sqlite"],
    ["xrun", "experiment-start", "out", "--store", "sqlite:///LONG.sqlite", "--results", "r"],
], ids=["generate-dry-run", "augment", "status", "experiment-start"])
def test_a_path_name_too_long_is_one_line(command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's ``Path.is_dir()``/``is_file()`` raise for a name longer than the system takes: these commands
    ended in an ``OSError: [Errno 36]`` traceback (exit 1)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.yaml").write_text(DUMMY, encoding="utf-8")
    assert CliRunner().invoke(xgen, ["generate", "doc.yaml", "-o", "out", "-q"]).exit_code == 0
    before = _files(tmp_path)
    program = {"xgen": xgen, "xrun": xrun}[command[0]]
    args = [str(tmp_path / ("x" * 300)) if a == "LONG" else a.replace("LONG", str(tmp_path / ("x" * 300)))
            for a in command[1:]]
    _one_error(CliRunner().invoke(program, args), "File name too long")
    assert _files(tmp_path) == before, "something was written"


@pytest.mark.parametrize("command", [
    ["xrun", "plan", "--power", "nan"], ["xrun", "plan", "--alpha", "nan"], ["xrun", "plan", "--delta", "nan"],
    ["xrun", "plan", "--delta", "inf"], ["xrun", "status", "--heartbeat-timeout", "nan"],
    ["xrun", "experiment-start", "x.yaml", "--store-wait", "nan"], ["xgen", "augment", "x.yaml", "--step", "nan"],
], ids=lambda c: "-".join(c[1:]))
def test_a_number_option_refuses_nan(command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No comparison with NaN is true, so click's ranges let ``nan`` through: ``xrun plan --power nan`` answered
    "power not reached at 1000 runs per point" (exit 0)."""
    monkeypatch.chdir(tmp_path)
    program = {"xgen": xgen, "xrun": xrun}[command[0]]
    _one_error(CliRunner().invoke(program, command[1:]), f"{command[-2]}: '{command[-1]}' is not a finite number")


def test_tree_refuses_a_tree_or_run_the_store_lacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``xrun tree --tree nope`` showed every run's lineage (exit 0) and ``--lineage --run nope`` "no runs"
    (exit 0), where ``xrun status --run nope`` is an error (exit 2)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.yaml").write_text(DUMMY, encoding="utf-8")
    assert CliRunner().invoke(xgen, ["generate", "doc.yaml", "-o", "out", "-q"]).exit_code == 0
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    started = CliRunner().invoke(xrun, ["experiment-start", "out/run-dummy-study-0000.yaml", "--store", store,
                                        "--results", "r", "--in-process", "--no-laydown", "-q"])
    assert started.exit_code == 0, started.output
    _one_error(CliRunner().invoke(xrun, ["tree", "--store", store, "--tree", "nope"]),
               "no session tree 'nope': the store has no session trees")
    _one_error(CliRunner().invoke(xrun, ["tree", "--store", store, "--lineage", "--run", "nope"]), "no run 'nope' in")
    shown = CliRunner().invoke(xrun, ["tree", "--store", store, "--lineage", "--run", "dummy-study-0000"])
    assert shown.exit_code == 0 and "dummy-study-0000" in shown.output, shown.output


@pytest.mark.parametrize(("case", "text", "where"), [
    ("set_without_ids", _edit(DUMMY, "first_two: {env: [0, 1]}", "first_two: {env: []}"),
     ":34: definitions.sensors.first_two: sensor set 'first_two' names no ids: an agent given it gets no sensors"),
    ("agent_without_set", _edit(DUMMY, "actuators: {random: [both]}", "actuators: {}"),
     "schedule[0].training.actuators: agent 'random' of phase 'training' has no actuators set here: it gets every "
     "actuator of the phase's environments"),
])
def test_an_agent_left_without_a_set_or_with_an_empty_one_warns(case: str, text: str, where: str,
                                                                  tmp_path: Path) -> None:
    """Both ran without a word: an empty set gives the agent nothing, a missing one everything."""
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(xgen, ["check", str(path)])
    assert result.exit_code == 0 and f"warning: {path}" in result.output and where in result.output, result.output


def test_a_placeholder_in_a_key_is_refused_and_one_without_braces_warns(tmp_path: Path) -> None:
    """``"${length}": 1`` as a key and ``"$length"`` as a value stayed as written in every run document."""
    path = tmp_path / "doc.yaml"
    path.write_text(_edit(DUMMY, 'sensors: 3, actuators: 2}', 'sensors: 3, actuators: 2, "${length}": 1}'),
                    encoding="utf-8")
    _one_error(CliRunner().invoke(xgen, ["check", str(path)]),
               "definitions.environments.small.environment.params.${length}: placeholders are replaced in values, "
               "not in keys")
    path.write_text(_edit(DUMMY, 'params: {length: "${length}", sensors: 3', 'params: {length: "$length", sensors: 3'),
                    encoding="utf-8")
    result = CliRunner().invoke(xgen, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert ("definitions.environments.small.environment.params.length: '$length' stays as written: a placeholder "
            "of factor 'length' is '${length}'") in result.output
    path.write_text(_edit(DUMMY, 'sensors: 3, actuators: 2}', 'sensors: 3, actuators: 2, note: "$${length} $$5"}'),
                    encoding="utf-8")  # an escaped placeholder and a lone dollar are no mistake
    quiet = CliRunner().invoke(xgen, ["check", str(path)])
    assert quiet.exit_code == 0 and "stays as written" not in quiet.output, quiet.output


@pytest.mark.parametrize(("case", "text", "fragment"), [
    # a pruning option moved one level up, out of its prune mapping: the rule ran with its default
    ("prune_option_up", _edit(DUMMY, RUN_CONFIG, RUN_CONFIG + "    reduction_factor: 3\n"),
     "definitions.run_config.reduction_factor: unknown key 'reduction_factor' here: it is a key of 'prune', one "
     "level down, the only place xdoe reads it (move it into 'prune')"),
    # a brain's params written beside it: the brain ran with its defaults
    ("params_up", _edit(DUMMY, "      brain: {name: xdoe.agents:DummyBrain, params: {}}",
                        "      brain: {name: xdoe.agents:DummyBrain}\n      params: {a: 1}"),
     "definitions.agents.random.params: unknown key 'params' here: it is a key of 'brain' or 'muscle' or "
     "'objective', one level down"),
    # a reward pushed into the environment component: the environment ran without it
    ("reward_down", _edit(DUMMY, "        params: {length: \"${length}\", sensors: 6, actuators: 4}",
                          "        params: {length: \"${length}\", sensors: 6, actuators: 4}\n"
                          "        reward: {name: xdoe.agents:RewardObjective}"),
     "definitions.environments.large.environment.reward: unknown key 'reward' here: it is a key of the mapping "
     "one level up"),
])
def test_a_key_one_level_off_its_place_is_refused(case: str, text: str, fragment: str, tmp_path: Path) -> None:
    """A key written one level above or below the model that reads it was an unknown key (a warning) and the
    setting was dropped."""
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    _one_error(CliRunner().invoke(xgen, ["check", str(path)]), fragment)


@pytest.mark.parametrize(("case", "old", "new", "fragment"), [
    ("episodes_up", "episodes: 2}", "}\n      episodes: 2",
     "schedule[0].Training Phase.episodes: unknown key 'episodes' here: it is a key of 'phase_config', one level "
     "down"),
    ("sensors_into_brain", "DummyBrain, params: {}}", "DummyBrain, params: {}, sensors: [x]}",
     "schedule[0].Training Phase.agents[0].brain.sensors: unknown key 'sensors' here: it is a key of the mapping "
     "one level up"),
])
def test_a_key_one_level_off_its_place_in_a_run_document_is_refused(case: str, old: str, new: str,
                                                                    fragment: str, tmp_path: Path) -> None:
    path = tmp_path / "run.yml"
    path.write_text(_edit(POWERGRID, old, new), encoding="utf-8")
    """``phase_config.episodes`` written beside ``phase_config`` ran 1 episode; an agent's ``sensors`` written in
    its brain gave it every sensor: each was a warning."""
    _one_error(CliRunner().invoke(xrun, ["experiment-check", str(path)]), fragment)
