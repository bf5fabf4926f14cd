"""A synthetic campaign with known effects, for testing the analysis.

Its environment (:class:`~xdoe.components.environments.FunctionEnvironment`
of :func:`truth`) pays, at the one step of each episode,

    reward = 10 * strong + 0 * null + 6 * strong * inter + N(0, 1)

with the noise drawn from the environment's seeded rng. The experiment has
three named factors ``strong``, ``null``, ``inter`` (levels 0 and 1), so the
true mean of every design point is known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dummy_study import known_truth_study

EPISODES = 16
REPETITIONS = 3
NOISE = 1.0


def truth(strong: int, null: int, inter: int) -> float:
    """The true mean reward of a design point."""
    return 10.0 * strong + 0.0 * null + 6.0 * strong * inter


def document(repetitions: int = REPETITIONS) -> dict[str, Any]:
    """The experiment document (plain data)."""
    return known_truth_study("synthetic", "synthetic:truth",
                             {"strong": {"levels": [0, 1]}, "null": {"levels": [0, 1]}, "inter": {"levels": [0, 1]}},
                             "full_factorial", noise=NOISE, repetitions=repetitions, episodes=EPISODES)


def run_campaign(folder: Path) -> dict[str, Any]:
    """Generate and run the campaign into ``folder`` (store ``xrun.sqlite``
    there) as users do, with ``xrun experiment-start`` (in this process; it
    also puts each run's ``laydown.svg`` into its results folder)."""
    from click.testing import CliRunner

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate

    out = folder / "_outputs"
    generate(document(), out)
    url = f"sqlite:///{out / 'xrun.sqlite'}"
    files = sorted(out.glob("run-*.yaml"))
    done = CliRunner().invoke(main, ["experiment-start", str(out), "--quiet", "--in-process", "--store", url,
                                     "--results", str(out / "results")])
    assert done.exit_code == 0, done.output
    return {"dir": out, "store": url, "runs": files}


#: the planted minimum of :func:`valley` (its mean reward there is 0) and the levels around it
VALLEY_MINIMUM = {"u": 2, "v": 1}
VALLEY_LEVELS = {"u": [0, 1, 2, 3], "v": [0, 1, 2]}
VALLEY_NOISE = 2.0


def valley(u: float, v: float) -> float:
    """A mean reward with its minimum, 0, at ``VALLEY_MINIMUM`` (its neighbours 2), and its maximum, 10, at
    (0, 0) and (0, 2)."""
    return 2.0 * ((float(u) - 2.0) ** 2 + (float(v) - 1.0) ** 2)


def valley_campaign(folder: Path, repetitions: int = 5) -> Path:
    """The full factorial over :data:`VALLEY_LEVELS` of :func:`valley` plus
    N(0, VALLEY_NOISE^2) (4 episodes a run), run with ``xrun experiment-start`` into
    ``folder/_outputs`` (its store ``xrun.sqlite`` there); returns that folder."""
    from click.testing import CliRunner

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate

    out = folder / "_outputs"
    generate(known_truth_study("valley", "synthetic:valley", {k: {"levels": v} for k, v in VALLEY_LEVELS.items()},
                               "full_factorial", noise=VALLEY_NOISE, repetitions=repetitions, episodes=4), out)
    done = CliRunner().invoke(main, ["experiment-start", str(out), "--quiet", "--in-process", "--no-laydown",
                                     "--store", f"sqlite:///{out / 'xrun.sqlite'}", "--results", str(out / "results")])
    assert done.exit_code == 0, done.output
    return out
