"""The outputs of a full factorial joined from level indices (issue 16: xgen's speed).

When every factor of a full factorial (``Design.grid``) has plain scalar
levels, each run's outputs are joined from texts rendered once per level
(or per combination of the levels a site reads), picked by the run's level
indices:

- the run file: the ``design_point.levels`` line of each level, the text of
  the structure's template (:mod:`xdoe.design._template`) around its sites,
  each site's text (:func:`~xdoe.design._template.site_text`, what the
  template's ``fill`` writes) per level of the factors it reads, the seed;
- the seed: the canonical JSON of the levels joined from each level's
  ``"name":value`` item, as :class:`~xdoe.design._seeds.LevelSeeds` joins
  it, hashed by :func:`~xdoe.design._seeds.seeds_of_levels_json`;
- the ``design.csv`` row: each level's cell as the ``csv`` module quotes it.

A structure without a template, or with a site whose value is not a plain
scalar (or cannot be computed) for some level, leaves its runs to the general
writer, which writes the same bytes or reports the error. So the outputs are
byte for byte those of the general writer; ``scripts/xgen_outputs.py`` and
``tests/design/test_grid.py`` compare them.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator

from xdoe.design._seeds import seeds_of_levels_json
from xdoe.design._shared import MAX_INSTANCES
from xdoe.design._template import TextTemplates, site_text
from xdoe.documents import PlaceholderError, canonical_json, find_placeholders, format_scalar
from xdoe.errors import DesignError

__all__ = ["MAX_SITE_COMBINATIONS", "Row", "grid_rows"]

#: most combinations of levels that a site reading several factors is rendered for
MAX_SITE_COMBINATIONS = 4096
#: one run's outputs: file name, file content, ``design.csv`` line
Row = tuple[str, bytes, bytes]
_MISSING = object()


def grid_rows(
    *,
    design: Any,
    grid: list[tuple[str, int, tuple]],
    templates: TextTemplates,
    root_seed: int,
    safe_uid: str,
    repetitions: int,
    run_file: Callable[[int], str],
    factor_names: list[str],
    csv_text: Callable[[Any], str],
    general: Callable[[int], Row],
) -> Iterator[Row] | None:
    """Every run's :data:`Row`, in run order, or ``None`` (use the general
    writer for all) when the level texts cannot be rendered up front.

    Args:
        design: the full factorial (``Design.grid``: ``indices``).
        grid: ``(factor name, design column, plain scalar levels)`` of every factor.
        templates: the run sequence's templates.
        root_seed: the experiment's seed.
        safe_uid: the experiment's uid as used in run uids.
        repetitions: runs per design point.
        run_file: the file name of run ``k``.
        factor_names: the factor columns of ``design.csv``.
        csv_text: one cell as ``design.csv`` writes it (quoted where needed).
        general: run ``k``'s row from the general writer.
    """
    n = len(design)
    by_name = {name: (col, table) for name, col, table in grid}
    if not grid or not n or not templates.enabled or not set(factor_names) <= set(by_name):
        return None
    uid_head = f"{safe_uid}-"
    if csv_text(uid_head) != uid_head:
        return None  # a uid the CSV quotes: the general writer
    ks = [d + 1 for d in design.indices(n - 1)]
    tables: list[tuple] = [()] * len(ks)
    for _, col, table in grid:
        tables[col] = table
    if any(len(tables[col]) != ks[col] for _, col, _ in grid):
        return None
    try:
        seed_of = seeds_of_levels_json(root_seed)
        items = _per_level(grid, len(ks), lambda name, value: canonical_json({name: value})[1:-1])
    except (DesignError, TypeError, ValueError):
        return None  # NaN, an odd seed...: the general writer reports it
    scalar = templates.scalar
    lines = _per_level(grid, len(ks), lambda name, value: f"    {scalar(name)}: {scalar(value)}\n")
    cells = [[csv_text(value) for value in by_name[name][1]] for name in factor_names]
    state = _State(grid, ks, templates)
    state.order = [by_name[name][0] for name in sorted(by_name)]
    state.csv_cols = [by_name[name][0] for name in factor_names]
    plain_uid = format_scalar(f"{safe_uid}-0") == f"{safe_uid}-0"  # then every run uid is plain
    experiment_uid = scalar(templates.experiment_uid)
    version = scalar(templates.expander.version)

    def rows() -> Iterator[Row]:
        order, csv_cols = state.order, state.csv_cols
        ranges = [range(k) for k in ks]
        for r in range(repetitions):
            middle = f"  repetition: {r}\nexperiment_uid: {experiment_uid}\n"
            for point, digits in enumerate(itertools.product(*ranges)):
                k = r * n + point
                compiled = state.structure(digits)
                if compiled is None:
                    yield general(k)
                    continue
                parts, last = compiled
                text = [f"design_point:\n  index: {point}\n  levels:\n"]
                text += [lines[c][digits[c]] for c in order]
                text.append(middle)
                for const, col, table in parts:
                    text.append(const)
                    text.append(table[digits[col]] if type(col) is int else table[tuple([digits[c] for c in col])])
                text.append(last)
                uid = f"{uid_head}{k:04d}"
                seed = seed_of("{" + ",".join([items[c][digits[c]] for c in order]) + "}", r)
                text.append(f"seed: {seed}\nuid: {uid if plain_uid else format_scalar(uid)}\nversion: {version}\n")
                line = f"{uid},{point},{r},{seed},{','.join([cells[i][digits[c]] for i, c in enumerate(csv_cols)])}\n"
                yield run_file(k), "".join(text).encode("utf-8"), line.encode("utf-8")

    return rows()


def _per_level(grid: list[tuple[str, int, tuple]], width: int, render: Callable[[str, Any], str]) -> list[list[str]]:
    """``render(name, level)`` of every level, per design column."""
    out: list[list[str]] = [[] for _ in range(width)]
    for name, col, table in grid:
        out[col] = [render(name, value) for value in table]
    return out


class _State:
    """The compiled templates of the structures met so far (at most
    :data:`~xdoe.design._shared.MAX_INSTANCES`, then forgotten in bulk)."""

    def __init__(self, grid: list[tuple[str, int, tuple]], ks: list[int], templates: TextTemplates) -> None:
        self.grid = grid
        self.ks = ks
        self.templates = templates
        #: the columns of the factors that choose the structure (used other than through placeholders)
        self.keys = [col for name, col, _ in grid if not templates.filled(name)]
        self.columns = {name: col for name, col, _ in grid}
        self.order: list[int] = []
        self.csv_cols: list[int] = []
        self._compiled: dict[tuple, Any] = {}

    def structure(self, digits: tuple[int, ...]) -> tuple[list[tuple[str, Any, Any]], str] | None:
        """The compiled template of the design point with level indices
        ``digits``: ``([(text before a site, column(s), site texts)], text after
        the last site)``, or ``None`` (the general writer)."""
        key = tuple([digits[c] for c in self.keys])
        compiled = self._compiled.get(key, _MISSING)
        if compiled is _MISSING:
            if len(self._compiled) >= MAX_INSTANCES:
                self._compiled.clear()
            levels = {name: table[digits[col]] for name, col, table in self.grid}
            template = self.templates.template(levels)
            compiled = self._compiled[key] = None if template is None else self._compile(template, levels)
        return compiled  # type: ignore[return-value]

    def _compile(self, template: Any, levels: dict[str, Any]) -> tuple[list[tuple[str, Any, Any]], str] | None:
        expander = self.templates.expander
        values = {**expander.controls, **levels}
        named = {name: values[name] for name in expander.named if name in values}
        pieces = []
        for name, source in template.sites:
            piece = self._site(name, source, named)
            if piece is None:
                return None
            pieces.append(piece)
        literals = template.literals
        parts = []
        pending = literals[0]
        for i, site in enumerate(template.slots, 1):
            piece = pieces[site]
            if isinstance(piece, str):
                pending += piece + literals[i]
            else:
                parts.append((pending, *piece))
                pending = literals[i]
        return parts, pending

    def _site(self, name: str | None, source: str, named: dict[str, Any]) -> Any:
        """A site's text (``str``) when no factor of the grid changes it, else
        ``(column, texts per level)`` or ``(columns, texts per tuple of level
        indices)``; ``None`` when some value has no text (the general writer)."""
        try:
            reads = {name} if name is not None else {n for _, n, _ in find_placeholders(source)}
        except PlaceholderError:
            return None
        cols = tuple(sorted(self.columns[n] for n in reads if n in self.columns and n in named))
        combinations = 1
        for c in cols:
            combinations *= self.ks[c]
        if combinations > MAX_SITE_COMBINATIONS:
            return None
        names = {col: n for n, col in self.columns.items()}
        tables = {col: table for _, col, table in self.grid}
        texts = {}
        for digits in itertools.product(*(range(self.ks[c]) for c in cols)):
            trial = dict(named)
            for c, d in zip(cols, digits):
                trial[names[c]] = tables[c][d]
            text = site_text(name, source, trial, self.templates.scalar)
            if text is None:
                return None
            texts[digits] = text
        if not cols:
            return texts[()]
        if len(cols) == 1:
            return cols[0], [texts[(d,)] for d in range(self.ks[cols[0]])]
        return cols, texts
