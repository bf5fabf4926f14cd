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
