"""The corpus of hostile documents (issue 10): inputs a hostile or unlucky
user gives ``xgen`` and ``xrun``. Every case must end in exit code 2 with one
``error: ...`` line holding ``expect``, no traceback, nothing written, fast.

Cases are built from the repository's own documents (``experiments/dummy.yaml``
for xgen; its first run document for xrun) by a small edit, so that each one
is valid but for the one hostile thing. ``tests/hostile/test_hostile.py``
runs them through the click applications; ``benchmarks/bench_hostile.py``
runs them as real processes and prints the time of each.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "experiments" / "dummy.yaml"


@dataclass(frozen=True)
class Case:
    """One hostile input.

    Attributes:
        name: the test id.
        text: the document (str, or bytes for undecodable input); ``None``
            when ``setup`` makes the input.
        expect: a fragment of the one error line.
        args: extra command-line options (``{tmp}`` is the test's folder).
        line: the 1-based line the error must name, if any.
        setup: makes extra files in the test's folder before the command
            runs (they are not counted as "written").
        input_name: file name of the document.
        start_exit: the exit code of ``xrun experiment-start``: 2, or 1 for
            a component that cannot be imported. Components are imported in
            the run's own process (a plugin crashing at import must not take
            the campaign down), so that run fails (one line naming it) while
            the others run; ``xrun experiment-check`` finds it up front (2).
    """

    name: str
    text: str | bytes | None
    expect: str
    args: tuple[str, ...] = ()
    line: int | None = None
    setup: Callable[[Path], None] | None = field(default=None, compare=False)
    input_name: str = "doc.yaml"
    start_exit: int = 2


def materialize(case: Case, tmp: Path) -> tuple[Path, list[str]]:
    """Write ``case``'s input (and its ``setup`` files) into ``tmp``; return
    the document's path and the extra arguments with ``{tmp}`` filled in."""
    if case.setup is not None:
        case.setup(tmp)
    path = tmp / case.input_name
    if isinstance(case.text, bytes):
        path.write_bytes(case.text)
    elif case.text is not None:
        path.write_text(case.text, encoding="utf-8")
    return path, [a.replace("{tmp}", str(tmp)) for a in case.args]


def _sub(text: str, old: str, new: str, count: int = 1) -> str:
    if old not in text:
        raise AssertionError(f"corpus base text lacks {old!r}")
    return text.replace(old, new, count)


def _re(text: str, pattern: str, new: str) -> str:
    out, n = re.subn(pattern, new, text, count=1, flags=re.M)
    if n != 1:
        raise AssertionError(f"corpus base text lacks /{pattern}/")
    return out


def alias_bomb(depth: int = 9, width: int = 9) -> str:
    """The "billion laughs" document of issue 10 (``width**depth`` strings)."""
    lines = ['a: &a ["lol"' + ',"lol"' * (width - 1) + "]"]
    names = "abcdefghijklmnopqrstuvwxyz"
    for p, n in zip(names[: depth - 1], names[1:depth]):
        lines.append(f"{n}: &{n} [" + ",".join(["*" + p] * width) + "]")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------- xgen


def xgen_cases() -> list[Case]:
    base = DUMMY.read_text(encoding="utf-8")
    factors_30 = "".join(f"  f{i}: {{levels: [0, 1]}}\n" for i in range(30))
    uses_30 = ", ".join(f'"${{f{i}}}"' for i in range(30))
    big_design = _sub(
        _sub(base, "  length: {levels: [5, 10]}", "  length: {levels: [5, 10]}\n" + factors_30.rstrip("\n")),
        "sensors: 3, actuators: 2}", f"sensors: 3, actuators: 2, extra: [{uses_30}]}}",
    )
    million = "[" + ",".join(str(i) for i in range(1_000_000)) + "]"
    cases = [
        # -- YAML-level attacks
        Case("alias_bomb", alias_bomb(), "aliases expand to more than"),
        Case("alias_bomb_in_params", _sub(base, "definitions:\n", alias_bomb(7, 9).replace("\n", "\n  ").join(
            ["bombs:\n  ", "\ndefinitions:\n"])), "aliases expand to more than"),
        Case("alias_bomb_wide", "a: &a [" + ",".join(["x"] * 400) + "]\nb: &b [" + ",".join(["*a"] * 400) + "]\n",
             "aliases expand to more than", line=2),
        Case("merge_key_bomb", "a: &a {" + ", ".join(f"k{i}: [1,2,3,4,5,6,7,8]" for i in range(50)) + "}\n"
             + "".join(f"m{i}: &m{i} {{<<: *{'a' if i == 0 else f'm{i-1}'}, z{i}: [*{'a' if i == 0 else f'm{i-1}'}, *{'a' if i == 0 else f'm{i-1}'}]}}\n" for i in range(20)),
             "aliases expand to more than"),
        Case("recursive_alias", "uid: x\na: &a [1, *a]\n", "recursive alias", line=2),
        Case("recursive_alias_map", "uid: x\na: &a {b: *a}\n", "recursive alias", line=2),
        Case("undefined_alias", _sub(base, "seed: 42", "seed: *nope"), "undefined alias"),
        Case("deep_flow_sequence", "uid: x\ndeep: " + "[" * 300 + "]" * 300 + "\n", "nested more than", line=2),
        Case("deep_flow_mapping", "uid: x\ndeep: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", "nested more than", line=2),
        Case("deep_block_mapping", "uid: x\ndeep:\n" + "".join(" " * i + "k:\n" for i in range(1, 400)),
             "nested more than"),
        Case("deep_block_sequence", "uid: x\ndeep:\n" + "".join(" " * i + "-\n" for i in range(1, 400)),
             "nested more than"),
        Case("deep_in_params", _sub(base, "params: {length: \"${length}\", sensors: 3, actuators: 2}",
                                    "params: {length: \"${length}\", sensors: 3, actuators: 2, x: " + "[" * 200 + "]" * 200 + "}"),
             "nested more than"),
        Case("oversized_document", base + "#" + "x" * (1024 * 1024) + "\n", "larger than"),
        Case("million_levels", _sub(base, "[5, 10]", million), "larger than"),
        Case("python_object_apply", _sub(base, "seed: 42", 'seed: !!python/object/apply:os.system ["echo pwned"]'),
             "tag !!python/object/apply:os.system refused", line=8),
        Case("python_name", _sub(base, "seed: 42", "seed: !!python/name:os.system"), "refused", line=8),
        Case("python_object_new", _sub(base, "definitions:\n", "x: !!python/object/new:subprocess.Popen [[ls]]\ndefinitions:\n"),
             "refused"),
        Case("python_module", _sub(base, "seed: 42", "seed: !!python/module:os"), "refused", line=8),
        Case("unknown_tag", _sub(base, "seed: 42", "seed: !custom 42"),
             "could not determine a constructor for the tag '!custom'", line=8),
        Case("multiple_documents", base + "\n---\nuid: second\n", "expected one YAML document"),
        Case("duplicate_key", _sub(base, "seed: 42", "seed: 42\nseed: 43"), "duplicate"),
        Case("not_utf8", b"uid: \xff\xfe bad\n", "not UTF-8"),
        Case("nul_bytes", "uid: x\x00y\n", "YAML"),
        Case("empty_file", "", "empty document"),
        Case("top_level_list", "- uid: x\n", "expected a mapping"),
        Case("unclosed_flow", _sub(base, "[5, 10]", "[5, 10"), "YAML syntax error"),
        Case("tab_indent", _sub(base, "  length:", "\tlength:"), "YAML syntax error"),
        # -- numbers xrun cannot store
        Case("nan_level", _sub(base, "[5, 10]", "[.nan, 10]"), "nan is not a finite number", line=14),
        Case("inf_level", _sub(base, "[5, 10]", "[5, .inf]"), "inf is not a finite number", line=14),
        Case("minus_inf_range", _sub(base, "  length: {levels: [5, 10]}", "  length: {range: [-.inf, 10]}"),
             "-inf is not a finite number", line=14),
        Case("nan_in_params", _sub(base, "sensors: 3, actuators: 2}", "sensors: 3, actuators: 2, noise: .NaN}"),
             "nan is not a finite number"),
        Case("overflowing_float", _sub(base, "seed: 42", "seed: 1e400"), "inf is not a finite number", line=8),
        # -- booleans where numbers belong
        Case("seed_true", _sub(base, "seed: 42", "seed: true"), "valid integer", line=8),
        Case("repetitions_true", _sub(base, "repetitions: 2", "repetitions: yes"), "valid integer"),
        Case("max_runs_true", _sub(base, "design: auto", "max_runs: true\ndesign: auto"), "valid integer"),
        Case("episodes_false", _sub(base, "episodes: 3", "episodes: false"), "valid integer"),
        Case("worker_float", _sub(base, "worker: 1, episodes: 3", "worker: 1.5, episodes: 3"), "valid integer"),
        Case("seed_negative", _sub(base, "seed: 42", "seed: -1"), "seed"),
        # -- designs too large for the machine
        Case("factorial_2_pow_30", _sub(big_design, "design: auto", "max_runs: -1\ndesign: auto"),
             "runs is more than max_total_runs 1000000"),
        Case("factorial_2_pow_30_no_max_runs", big_design, "give max_runs"),
        Case("repetitions_ten_million", _sub(base, "repetitions: 2", "repetitions: 10000000"),
             "80000000 runs is more than max_total_runs", line=11),
        Case("max_runs_huge_continuous", _sub(_sub(base, "{levels: [5, 10]}", "{range: [5, 10]}"),
                                              "design: auto", "max_runs: 100000000\ndesign: auto"),
             "more than max_total_runs"),
        Case("document_max_total_runs", _sub(base, "design: auto", "max_total_runs: 10\ndesign: auto"),
             "16 runs is more than max_total_runs 10"),
        Case("option_max_total_runs", base, "16 runs is more than max_total_runs 15", args=("--max-total-runs", "15")),
        Case("max_total_runs_zero", _sub(base, "design: auto", "max_total_runs: 0\ndesign: auto"), "max_total_runs"),
        # -- file system
        Case("uid_300_chars", _re(base, r"^uid: .*$", "uid: " + "u" * 300), "too long for file names", line=7),
        Case("uid_slash", _re(base, r"^uid: .*$", "uid: ../../etc/x"), "must not contain", line=7),
        Case("output_under_a_file", base, "cannot write the output", args=("-o", "{tmp}/existing.txt/sub"),
             setup=lambda tmp: (tmp / "existing.txt").write_text("keep me\n")),
        Case("output_in_proc", base, "cannot write the output", args=("-o", "/proc/xdoe-out")),
        Case("output_is_a_file", base, "exists and is not a directory", args=("-o", "{tmp}/existing.txt"),
             setup=lambda tmp: (tmp / "existing.txt").write_text("keep me\n")),
        Case("output_holds_foreign_run_file", base, "not written by xgen for it", args=("-o", "{tmp}/mine", "--force-folder"),
             setup=lambda tmp: ((tmp / "mine").mkdir(), (tmp / "mine" / "run-dummy-study-0000.yaml").write_text("x"))),
        Case("output_not_created_by_xgen", base, "was not created by xgen", args=("-o", "{tmp}/mine"),
             setup=lambda tmp: ((tmp / "mine").mkdir(), (tmp / "mine" / "notes.txt").write_text("x"))),
        # /etc itself only with --dry-run: run against code without the check, a plain generate would write there
        Case("output_like_etc", base, "was not created by xgen", args=("-o", "{tmp}/etc"),
             setup=lambda tmp: ((tmp / "etc").mkdir(), (tmp / "etc" / "passwd").write_text("root:x:0:0\n"))),
        Case("output_etc_dry_run", base, "was not created by xgen", args=("-o", "/etc", "--dry-run")),
        Case("output_fake_manifest", base, "was not created by xgen", args=("-o", "{tmp}/mine"),
             setup=lambda tmp: ((tmp / "mine").mkdir(), (tmp / "mine" / "manifest.json").write_text("{}"))),
        Case("input_is_a_directory", None, "is a directory", setup=lambda tmp: (tmp / "doc.yaml").mkdir()),
        Case("input_missing", None, "file not found"),
        # -- references and placeholders
        Case("malformed_req", _sub(base, "agents: [[random]]", "agents: [[random], \"$req(phase=\"]"), "malformed reference"),
        Case("unknown_placeholder", _sub(base, '"${length}", sensors: 3', '"${lenght}", sensors: 3'), "unknown factor"),
        Case("unclosed_placeholder", _sub(base, '"${length}", sensors: 3', '"${length", sensors: 3'), "length"),
        Case("schedule_not_a_list", _re(base, r"^schedule:\n(.|\n)*", "schedule: 5\n"), "schedule"),
        *_issue25_xgen(base),
        *_issue33_design_sizes(base),
    ]
    return cases


def _re_literal(text: str, pattern: str, new: str) -> str:
    """Like :func:`_re`, with ``new`` taken literally (YAML escapes such as ``\\e`` stay)."""
    out, n = re.subn(pattern, lambda _m: new, text, count=1, flags=re.M)
    if n != 1:
        raise AssertionError(f"corpus base text lacks /{pattern}/")
    return out


#: uids palaestrAI and arsenAI accept and xdoe reads as written (issue 33.1): refused before, now
#: accepted, their files named by a slug and a short hash (xgen documents, then run documents)
ACCEPTED_UIDS = ['"Minimal Powergrid Run"', "düm", "a:b", "-x", "up..broken", '"Yo-ho, a dummy experiment run for me!"',
                 '"Ω"', '".hidden"', '"a\\\\b"', '"日本語の実験"']


def _uid(text: str, value: str) -> str:
    """``text`` with its top-level ``uid:`` line set to ``value`` (YAML text, taken literally)."""
    return _re_literal(text, r"^uid: .*$", "uid: " + value)


def _fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "doc.yaml")


def _link_to(target: str) -> Callable[[Path], None]:
    return lambda tmp: (tmp / "doc.yaml").symlink_to(target)


#: characters that must never reach a uid: newline, BEL, ESC (ANSI colour), U+2028, U+202E, U+200B, tab, DEL
_CONTROL = {"newline": "\\n", "bel": "\\a", "ansi": "\\e[31m", "line_separator": "\\u2028",
            "rtl_override": "\\u202e", "zero_width": "\\u200b", "tab": "\\t", "del": "\\x7f"}


def _issue25_xgen(base: str) -> list[Case]:
    """Issue 25, items 7-9 for experiment documents: unbounded resources,
    values that crashed (tracebacks), names the store or file system cannot hold."""
    tenk = "".join(f"  f{i}: {{levels: [0, 1]}}\n" for i in range(10_000))
    return [
        # -- 7: resources bounded before anything is allocated or read
        Case("worker_billion", _sub(base, "worker: 1, episodes: 3", "worker: 1000000000, episodes: 3"),
             "less than or equal to 1024", line=44),
        Case("episodes_10_pow_30", _sub(base, "episodes: 3", "episodes: " + "1" + "0" * 30), "64-bit", line=44),
        Case("episodes_above_limit", _sub(base, "episodes: 3", "episodes: 1000000001"), "less than or equal to 1000000000"),
        # the time limits and the observation policy (issue 25, the remainder)
        Case("step_timeout_nan", _sub(base, "worker: 1, episodes: 3", "worker: 1, episodes: 3, step_timeout: .nan"),
             "step_timeout: nan is not a finite number", line=44),
        Case("step_timeout_text", _sub(base, "worker: 1, episodes: 3", "worker: 1, episodes: 3, step_timeout: 5s"),
             "step_timeout: Input should be a valid number", line=44),
        Case("observation_check_unknown", _sub(base, "worker: 1, episodes: 3",
                                               "worker: 1, episodes: 3, observation_check: loud"),
             "observation_check: Input should be 'warn', 'error' or 'off'", line=44),
        Case("factors_10000_max_runs_20", _sub(_sub(base, "  length: {levels: [5, 10]}", "  length: {levels: [5, 10]}\n" + tenk.rstrip("\n")),
                                               "design: auto", "max_runs: 20\ndesign: auto"), "more than 20000 nodes"),
        Case("factors_101", _sub(_sub(base, "  length: {levels: [5, 10]}", "  length: {levels: [5, 10]}\n"
                                      + "".join(f"  f{i}: {{levels: [0, 1]}}\n" for i in range(100)).rstrip("\n")),
                                 "design: auto", "max_runs: 20\ndesign: auto"), "101 factors is more than the limit of 100",
             line=14),
        Case("schedule_factors_101", _sub(base, "  length: {levels: [5, 10]}", "  length: {levels: [5, 10]}\n"
                                          + "".join(f"  g{i}: {{levels: [0, 1]}}\n" for i in range(99)).rstrip("\n")),
             "more than the limit of 100"),
        Case("many_nodes", "uid: x\nlist: [" + ",".join(["1"] * 25_000) + "]\n", "more than 20000 nodes", line=2),
        Case("dev_zero", None, "not a regular file", setup=_link_to("/dev/zero")),
        Case("fifo", None, "a FIFO, not a regular file", setup=_fifo),
        # -- 8: values that used to crash with a traceback
        Case("level_lone_surrogate", _sub(base, "[5, 10]", '[5, "\\ud800"]'), "lone surrogate", line=14),
        Case("level_binary", _sub(base, "[5, 10]", "[5, !!binary aGVsbG8=]"), "!!binary", line=14),
        Case("level_set", _sub(base, "[5, 10]", "[5, !!set {a, b}]"), "!!set", line=14),
        Case("level_date", _sub(base, "[5, 10]", "[5, 2024-01-01]"), "date", line=14),
        Case("level_timestamp", _sub(base, "[5, 10]", "[5, 2024-01-01 10:00:00]"), "date", line=14),
        Case("param_date", _sub(base, "sensors: 3, actuators: 2}", "sensors: 3, actuators: 2, day: 2024-01-01}"), "date"),
        Case("complex_key", _sub(base, "sensors: 3, actuators: 2}", "sensors: 3, actuators: 2, [a, b]: 1}"), "key"),
        Case("seed_10000_digits", _sub(base, "seed: 42", "seed: " + "9" * 10_000), "too large", line=8),
        Case("seed_hex_huge", _sub(base, "seed: 42", "seed: 0x" + "f" * 200), "too large", line=8),
        Case("output_nul", _sub(base, "output: _outputs/dummy", 'output: "a\\0b"'), "NUL", line=10),
        Case("param_nul", _sub(base, "sensors: 3, actuators: 2}", 'sensors: 3, actuators: 2, x: "a\\0"}'), "NUL"),
        # -- 9: what the store or the file system cannot hold
        Case("seed_2_pow_63", _sub(base, "seed: 42", f"seed: {2**63}"), "64-bit", line=8),
        Case("param_2_pow_64", _sub(base, "sensors: 3, actuators: 2}", f"sensors: 3, actuators: 2, big: {2**64}}}"), "64-bit"),
        Case("level_minus_2_pow_70", _sub(base, "[5, 10]", f"[5, {-2**70}]"), "64-bit", line=14),
        Case("uid_dot", _uid(base, '"."'), "must not be '.'", line=7),
        Case("uid_dotdot", _uid(base, '".."'), "must not be '..'", line=7),
        Case("uid_blank", _uid(base, '"   "'), "uid is empty", line=7),
        Case("uid_empty", _uid(base, '""'), "uid", line=7),
        Case("uid_65", _uid(base, "u" * 65), "too long", line=7),
        Case("uid_nul", _uid(base, '"dum\\0my"'), "NUL", line=7),
        *[Case(f"uid_{name}", _uid(base, f'"dum{char}my"'), "must not contain U+", line=7) for name, char in _CONTROL.items()],
        Case("id_control", _re_literal(base, r"^uid: .*$", 'id: "dum\\nmy"'), "must not contain", line=7),
        Case("agent_name_300", _sub(base, "      name: random\n", "      name: " + "a" * 300 + "\n"), "too long", line=29),
        Case("agent_name_slash", _sub(base, "      name: random\n", "      name: a/b\n"), "must not contain '/'", line=29),
        Case("agent_name_ansi", _sub(base, "      name: random\n", '      name: "a\\e[2Jb"\n'), "must not contain U+001B", line=29),
        Case("agent_key_rtl", _sub(_sub(base, "    random:\n      name: random\n", '    "r\\u202eandom":\n'),
                                    "agents: [[random]]", 'agents: [["r\\u202eandom"]]'), "U+202E"),
        Case("phase_name_newline", _sub(base, "  - training:", '  - "train\\ning":'), "must not contain U+000A"),
        Case("phase_name_dotdot", _sub(base, "  - training:", '  - "..":'), "must not be"),
        Case("environment_uid_slash", _sub(base, "        uid: env\n", "        uid: ../env\n", 1), "must not contain '/'"),
    ]


def _issue33_design_sizes(base: str) -> list[Case]:
    """Issue 33, item 4: every design method's size from its options alone,
    refused before any array is built (these hung or ran out of memory)."""
    big = "1000000000"

    def design(text: str) -> str:
        return _sub(base, "design: auto", f"design: {text}")

    many = "".join(f"  c{i}: {{range: [0, 1]}}\n" for i in range(40)).rstrip("\n")
    return [
        Case("plackett_burman_center_1e9", design(f"{{method: plackett_burman, center: {big}}}"),
             "design.center: center 1000000000: design plackett_burman has 1000000004 points", line=12),
        Case("fractional_factorial_center_1e9", design(f"{{method: fractional_factorial, center: {big}}}"),
             "design.center: center 1000000000", line=12),
        Case("fractional_factorial_generators_center", design(f'{{method: fractional_factorial, generators: "a b c ab", center: {big}}}'),
             "design.center", line=12),
        Case("central_composite_center_1e9", design(f"{{method: central_composite, center: {big}}}"), "design.center",
             line=12),
        Case("central_composite_40_factors", _sub(design("{method: central_composite}"), "  length: {levels: [5, 10]}",
                                                  "  length: {levels: [5, 10]}\n" + many),
             "design: design central_composite has 8796093022298 points", line=12),
        Case("box_behnken_center_1e9", design(f"{{method: box_behnken, center: {big}}}"), "design.center", line=12),
        Case("morris_trajectories_1e9", design(f"{{method: morris, trajectories: {big}}}"),
             "design.trajectories: trajectories 1000000000: design morris", line=12),
        Case("sobol_n_2_pow_40", design(f"{{method: sobol, n: {2**40}}}"), "design.n: n 1099511627776", line=12),
        Case("halton_n_2_pow_40", design(f"{{method: halton, n: {2**40}}}"), "design.n", line=12),
        Case("saltelli_n_2_pow_40", design(f"{{method: saltelli, n: {2**40}}}"), "design.n", line=12),
        Case("d_optimal_runs_2_pow_40", design(f"{{method: d_optimal, runs: {2**40}}}"), "design.runs", line=12),
        Case("lhs_n_2_pow_40", _sub(design(f"{{method: lhs, n: {2**40}}}"), "{levels: [5, 10]}", "{range: [5, 10]}"),
             "design.n: n 1099511627776: design lhs", line=12),
        Case("maximin_n_2_pow_40", _sub(design(f"{{method: maximin, n: {2**40}}}"), "{levels: [5, 10]}", "{range: [5, 10]}"),
             "design.n", line=12),
        Case("plackett_burman_repetitions", _sub(design("{method: plackett_burman}"), "repetitions: 2",
                                                 "repetitions: 1000000"), "lower repetitions", line=11),
        Case("plackett_burman_center_option_limit", design("{method: plackett_burman, center: 200}"),
             "exceeds max_total_runs 100", args=("--max-total-runs", "100"), line=12),
        Case("plackett_burman_center_document_limit", _sub(design("{method: plackett_burman, center: 200}"),
                                                          "seed: 42", "seed: 42\nmax_total_runs: 100"),
             "exceeds max_total_runs 100", line=13),
    ]


# ----------------------------------------------------------------- xrun


def base_run_document() -> str:
    """The first run document xgen writes for ``experiments/dummy.yaml``."""
    from xdoe.design.runfiles import generate

    runs, _design = generate(DUMMY)
    return runs.dump(0)


def xrun_cases() -> list[Case]:
    base = base_run_document()
    cases = [
        Case("alias_bomb", alias_bomb(), "aliases expand to more than"),
        Case("alias_bomb_in_params", _sub(base, "schedule:\n", alias_bomb(7, 9).replace("\n", "\n  ").join(
            ["bombs:\n  ", "\nschedule:\n"])), "aliases expand to more than"),
        Case("recursive_alias", "uid: x\na: &a [1, *a]\n", "recursive alias", line=2),
        Case("deep_flow", "uid: x\ndeep: " + "[" * 300 + "]" * 300 + "\n", "nested more than", line=2),
        Case("deep_flow_mapping", "uid: x\ndeep: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", "nested more than"),
        Case("deep_block", "uid: x\ndeep:\n" + "".join(" " * i + "k:\n" for i in range(1, 400)), "nested more than"),
        Case("oversized", base + "#" + "x" * (1024 * 1024) + "\n", "larger than"),
        Case("python_tag", _sub(base, "seed: ", "seed: !!python/object/apply:os.system [\"echo pwned\"] #"), "refused"),
        Case("no_schedule", _re(base, r"^schedule:\n(  .*\n)*", ""), "schedule: required key missing"),
        Case("schedule_empty", _re(base, r"^schedule:\n(  .*\n)*", "schedule: []\n"), "schedule"),
        Case("schedule_not_a_list", _re(base, r"^schedule:\n(  .*\n)*", "schedule: {a: 1}\n"), "schedule"),
        Case("phase_not_a_mapping", _re(base, r"^schedule:\n(  .*\n)*", "schedule:\n  - 5\n"), "one-key mapping"),
        Case("seed_true", _re(base, r"^seed: .*$", "seed: true"), "valid integer"),
        Case("seed_float", _re(base, r"^seed: .*$", "seed: 1.5"), "valid integer"),
        Case("seed_negative", _re(base, r"^seed: .*$", "seed: -3"), "seed"),
        Case("nan_param", _sub(base, "length: 5", "length: .nan"), "nan is not a finite number"),
        Case("inf_level", _sub(base, "    length: 5", "    length: .inf"), "inf is not a finite number", line=7),
        Case("episodes_true", _sub(base, "episodes: 3", "episodes: true"), "valid integer"),
        Case("worker_zero", _sub(base, "worker: 1", "worker: 0"), "greater than or equal to 1"),
        Case("mode_bogus", _sub(base, "mode: train", "mode: play"), "expected mode"),
        Case("uid_slash", _re(base, r"^uid: .*$", "uid: ../evil"), "must not contain"),
        Case("os_system_brain", _sub(base, "xdoe.agents:DummyBrain", "os:system"), "not a class"),
        Case("os_system_condition", _sub(base, "xdoe.conditions:MaxEpisodesTerminationCondition", "os:system"),
             "not a class"),
        Case("builtins_eval", _sub(base, "xdoe.agents:DummyMuscle", "builtins:eval"), "not a class"),
        Case("unknown_module", _sub(base, "xdoe.environments:DummyEnvironment", "no_such_module_xyz:Env"),
             "cannot import module", start_exit=1),
        Case("empty_component_name", _sub(base, "xdoe.agents:DummyBrain", "''"), "name"),
        Case("duplicate_key", _re(base, r"^seed: (.*)$", r"seed: \1\nseed: 7"), "duplicate"),
        Case("not_utf8", b"uid: \xff\xfe\n", "utf-8"),
        Case("empty_file", "", "expected a mapping"),
        Case("top_level_list", "- 1\n- 2\n", "expected a mapping"),
        Case("yaml_syntax", base.replace("schedule:", "schedule: [", 1), "YAML syntax error"),
        Case("multiple_documents", base + "---\nuid: b\n", "expected one YAML document"),
        Case("input_is_an_empty_directory", None, "holds no run files", setup=lambda tmp: (tmp / "doc.yaml").mkdir()),
        Case("input_missing", None, "not found"),
        *_issue25_xrun(base),
        *_issue33_names(base),
    ]
    return cases


def _issue33_names(base: str) -> list[Case]:
    """Issue 33, item 3: component names that can never run are refused up
    front by ``experiment-check`` and ``experiment-start`` alike (exit 2,
    nothing written); only a module that does not import here stays a run
    failure (it may import on the node that runs it)."""
    brain, muscle = "xdoe.agents:DummyBrain", "xdoe.agents:DummyMuscle"
    sensors = "          sensors:\n            - env.0"
    actuators = "- actuators:\n            - env.0"
    return [
        Case("main_module_brain", _sub(base, brain, "__main__:DummyBrain"), "names __main__", line=20),
        Case("relative_module_brain", _sub(base, brain, ".agents:DummyBrain"), "relative module name", line=20),
        Case("double_colon_brain", _sub(base, brain, "xdoe.agents::DummyBrain"), "expected a component name",
             line=20),
        Case("builtin_class_brain", _sub(base, brain, "builtins:int"), "is not a subclass", line=20),
        Case("builtin_class_environment", _sub(base, "xdoe.environments:DummyEnvironment", "builtins:dict"),
             "is not a subclass"),
        Case("wrong_base_brain", _sub(base, brain, muscle), "is not a subclass of xdoe.agent", line=20),
        Case("unknown_sensor", _sub(base, sensors, sensors.replace("env.0", "env.9")), "no sensor 'env.9'"),
        Case("unknown_actuator", _sub(base, actuators, actuators.replace("env.0", "env.7")), "no actuator 'env.7'"),
    ]


def _issue25_xrun(base: str) -> list[Case]:
    """Issue 25, items 7-9 for run documents."""
    level = "    length: 5\n  repetition"
    return [
        Case("worker_billion", _sub(base, "worker: 1", "worker: 1000000000"), "less than or equal to 1024"),
        Case("episodes_10_pow_30", _sub(base, "episodes: 3", "episodes: " + "1" + "0" * 30), "64-bit"),
        Case("step_timeout_inf", _sub(base, "        worker: 1\n", "        worker: 1\n        step_timeout: .inf\n"),
             "step_timeout: inf is not a finite number"),
        Case("run_timeout_negative", _sub(base, "run_config:\n", "run_config:\n  timeout: -1\n"),
             "run_config.timeout: Input should be greater than 0"),
        Case("observation_check_list", _sub(base, "        worker: 1\n", "        worker: 1\n        observation_check: [warn]\n"),
             "observation_check: Input should be 'warn', 'error' or 'off'"),
        Case("many_nodes", _sub(base, "      length: 5\n", "      length: [" + ",".join(["1"] * 25_000) + "]\n"),
             "more than 20000 nodes"),
        Case("dev_zero", None, "not a regular file", setup=_link_to("/dev/zero")),
        Case("fifo", None, "a FIFO, not a regular file", setup=_fifo),
        Case("seed_10000_digits", _re(base, r"^seed: .*$", "seed: " + "9" * 10_000), "too large"),
        Case("seed_2_pow_63", _re(base, r"^seed: .*$", f"seed: {2**63}"), "64-bit"),
        Case("index_2_pow_70", _sub(base, "  index: 0", f"  index: {2**70}"), "64-bit"),
        Case("repetition_2_pow_63", _sub(base, "  repetition: 0", f"  repetition: {2**63}"), "64-bit"),
        Case("level_lone_surrogate", _sub(base, level, '    length: "\\ud800"\n  repetition'), "lone surrogate"),
        Case("level_binary", _sub(base, level, "    length: !!binary aGVsbG8=\n  repetition"), "!!binary"),
        Case("level_set", _sub(base, level, "    length: !!set {a, b}\n  repetition"), "!!set"),
        Case("param_date", _sub(base, "      length: 5\n", "      length: 2024-01-01\n"), "date"),
        Case("uid_300", _uid(base, "u" * 300), "too long"),
        Case("uid_dot", _uid(base, '"."'), "must not be '.'"),
        Case("uid_nul", _uid(base, '"a\\0b"'), "NUL"),
        Case("uid_slash_inside", _uid(base, '"Minimal Powergrid/Run"'), "must not contain '/'"),
        Case("uid_blank", _uid(base, '" "'), "uid is empty"),
        *[Case(f"uid_{name}", _uid(base, f'"dum{char}my"'), "must not contain U+") for name, char in _CONTROL.items()],
        Case("experiment_uid_300", _re(base, r"^experiment_uid: .*$", "experiment_uid: " + "e" * 300), "too long"),
        Case("experiment_uid_ansi", _re_literal(base, r"^experiment_uid: .*$", 'experiment_uid: "a\\e[31mb"'), "U+001B"),
        Case("agent_name_300", _sub(base, "name: random", "name: " + "a" * 300, 2), "too long"),
        Case("agent_name_newline", _sub(base, "name: random", 'name: "a\\nb"', 2), "U+000A"),
        Case("phase_name_rtl", _sub(base, "  - training:", '  - "tr\\u202eaining":'), "U+202E"),
        Case("environment_uid_control", _sub(base, "uid: env\n", 'uid: "e\\x1bv"\n', 2), "U+001B"),
    ]


def store_cases() -> list[tuple[str, str, str]]:
    """``(name, --store URL, expected fragment)``: stores xrun cannot open
    (exit 2 before anything runs)."""
    return [
        ("unreachable_postgres", "postgresql+psycopg://user:secret@127.0.0.1:9/none?connect_timeout=2", "cannot open store"),
        ("unknown_backend", "bogus://x", "cannot open store"),
        ("malformed_url", "not a url", "cannot open store"),
        ("sqlite_under_proc", "sqlite:////proc/xdoe-nope/x.sqlite", "store"),
    ]
