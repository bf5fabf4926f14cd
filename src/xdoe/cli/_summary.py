"""The end-of-campaign summary table of ``xrun experiment-start``.

One row per run: run uid, factor levels, status, episodes, mean test-phase
objective per agent, wall time. The uid, the status, the episodes and the
wall time are never cut or folded, whatever the terminal's width (narrower
than they need, the table is wider than the terminal): on a wide terminal the factor levels get their
own column (folded between factors when long); on a narrow one (e.g. 80
columns) they go below the uid, in the run column, folded to its width. Every
cell is plain text: a level such as ``[learner]`` is shown as it is, never
read as rich markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from xdoe.execution import RunResult

__all__ = ["summary_table"]

_STYLES = {"skipped": "yellow", "claimed": "yellow", "pruned": "cyan"}
#: the levels get their own column only when it can be at least this wide
_LEVELS_MIN = 30
_HEADERS = ("run", "factor levels", "status", "episodes", "test objective", "wall time")


@dataclass(frozen=True)
class _Row:
    uid: str
    levels: str
    status: str
    style: str
    episodes: str
    objective: str  # one line per agent
    wall: str


def _rows(results: Sequence["RunResult"], skipped: Sequence[str], levels: dict[str, str]) -> list[_Row]:
    rows = []
    for r in results:
        means = r.mean_objectives("test")
        objective = "\n".join(f"{agent} {value:.3g}" for agent, value in means.items()) or "-"
        style = "" if r.ok and r.status != "skipped" else _STYLES.get(r.status, "red")
        rows.append(_Row(r.uid, levels.get(r.uid, ""), r.status, style, str(r.episodes), objective,
                         f"{r.wall_time:.2f} s"))
    rows += [_Row(uid, levels.get(uid, ""), "skipped", "yellow", "0", "-", "-") for uid in skipped]
    return rows


def _widest(lines: Any) -> int:
    return max((len(line) for text in lines for line in text.split("\n")), default=0)


def summary_table(results: Sequence["RunResult"], skipped: Sequence[str] = (),
                  levels: dict[str, str] | None = None, *, width: int = 80) -> Any:
    """The summary as a :class:`rich.table.Table` laid out for a terminal
    ``width`` columns wide (``Console().width``).

    Args:
        results: one per run that ran (or was found finished).
        skipped: uids of runs that never started (``--fail-fast``).
        levels: run uid -> its factor levels as text (``agent=learner, alpha=0.5``).
        width: the terminal's width in characters.

    Returns:
        the table; the objective is the mean test-phase objective per agent
        (for ``RewardObjective``, the summed environment rewards).
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    levels = {uid: text for uid, text in (levels or {}).items() if text}
    rows = _rows(results, skipped, levels)
    with_levels = any(row.levels for row in rows)
    fixed = [_widest([_HEADERS[0], *(r.uid for r in rows)]), _widest([_HEADERS[2], *(r.status for r in rows)]),
             len(_HEADERS[3]), _widest([*(r.objective for r in rows)]), _widest([_HEADERS[5], *(r.wall for r in rows)])]
    # boxed, when it fits: 3 characters per column (rule and padding) and the left edge
    boxed = sum(fixed) + 3 * len(fixed) + 1 + (_LEVELS_MIN + 3 if with_levels else 0) <= width
    run_width = objective_width = None
    if boxed:
        table = Table(title="xrun summary", box=box.ROUNDED)
    else:  # narrow: no vertical rules and no outer padding, so the uid and the numbers keep their room;
        # the run and objective columns share what is left; a console narrower than the uid, the status,
        # the episodes and the wall time gets a wider table (xdoe.cli._common.console), never a cut one
        table = Table(title="xrun summary", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False, padding=(0, 1, 0, 0))  # between two columns: a space and the rule's space
        room = width - 2 * (len(fixed) - 1) - fixed[1] - len(_HEADERS[3]) - fixed[4]
        fit = max(fixed[3], len("objective"))  # the header's longest word, at least
        objective_width = max(len("objective"), min(fit, room - fixed[0]))
        run_width = max(fixed[0], room - objective_width)  # a uid is never folded (too narrow: wider than width)
    below = with_levels and not boxed  # the levels go below the uid
    table.add_column("run / factor levels" if below else _HEADERS[0], min_width=fixed[0], width=run_width,
                     overflow="fold")
    if with_levels and boxed:
        table.add_column(_HEADERS[1], overflow="fold")
    table.add_column(_HEADERS[2], no_wrap=True, min_width=fixed[1])
    table.add_column(_HEADERS[3], justify="right", no_wrap=True)
    table.add_column(_HEADERS[4], overflow="fold", width=objective_width)
    table.add_column(_HEADERS[5], justify="right", no_wrap=True, min_width=fixed[4])
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    if "pruned" in counts:  # a pruned campaign: how many ran to the end and how many were pruned
        table.caption = f"{len(rows)} run(s): " + ", ".join(f"{n} {status}" for status, n in counts.items())
    for row in rows:
        run = Text(row.uid)
        if below and row.levels:
            run.append("\n" + row.levels, style="dim")
        cells = [run] + ([Text(row.levels)] if with_levels and boxed else [])
        cells += [Text(row.status, style=row.style), Text(row.episodes), Text(row.objective), Text(row.wall)]
        table.add_row(*cells)
    return table
