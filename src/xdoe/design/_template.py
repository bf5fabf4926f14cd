"""Run files written from text templates (issue 16: xgen's speed).

The run documents of design points that choose the same schedule levels
differ only where a named factor's placeholder is filled in. So the
``run_config`` and ``schedule`` lines are rendered once per such structure
(:class:`TextTemplates`), from a *probe* document in which every string
holding a placeholder is a unique sentinel; the text is cut at the
sentinels, and each run fills in its rendering of those strings.

Identical to the full writer by construction: the text around the sites is
the writer's own output (:func:`~xdoe.documents.dump_canonical`), and a site
is filled with ``format_scalar(interpolate(string, named))``, the writer's
rendering of the value the expander would put there. A template is used
only where that equivalence holds, else the full writer runs:

- every sentinel must stand as a whole scalar (``key: S`` or ``- S``); one
  that reached another string (an environment uid used in sensor ids) or a
  uid or agent name (checked for duplicates) disables the structure's
  template;
- a site whose value is not a plain scalar (a list or mapping level) makes
  that run use the full writer;
- the experiment's data must hold no NUL character, so no string of the
  document can look like a sentinel;
- any error while probing or filling (a missing conditional factor, ``$req``
  out of range...) leaves the run to the full writer, which reports it.

``scripts/xgen_outputs.py`` compares the outputs of two versions of xgen
byte for byte; ``tests/design/test_template.py`` pins them.
"""

from __future__ import annotations

import re
from typing import Any

from xdoe.design._shared import MAX_INSTANCES
from xdoe.documents import (
    PlaceholderError,
    canonical_json,
    dump_canonical,
    format_scalar,
    interpolate,
    whole_placeholder,
)

__all__ = ["TextTemplates", "site_text"]

_SENTINEL = "\x00xdoe-site-{}\x00"
_MARK = "xdoe-site-"
#: a sentinel as dump_canonical writes it (NUL is escaped as \0 in a double-quoted scalar)
_RENDERED = re.compile(r'"\\0xdoe-site-(\d+)\\0"')
_PLAIN_SCALARS = (int, float, bool, type(None))
_MISSING = object()


class _NoTemplate(Exception):
    """The probe cannot stand for the documents of this structure."""


class _Probe:
    """Builds definitions with a sentinel in place of every string holding a
    placeholder (set as the expander's ``probe`` while a template is made)."""

    def __init__(self) -> None:
        self.sites: list[str] = []
        self._index: dict[str, int] = {}

    def instance(self, compiled: tuple[str, Any], names: tuple[str, ...], named: dict[str, Any]) -> Any:
        if any(name not in named for name in names):
            raise _NoTemplate  # the full writer reports the inactive conditional factor
        return self._build(compiled)

    def _build(self, compiled: tuple[str, Any]) -> Any:
        tag, node = compiled
        if tag == "const":
            return node
        if tag == "str":  # one site per distinct string: its value is the same wherever it stands
            site = self._index.get(node)
            if site is None:
                site = self._index[node] = len(self.sites)
                self.sites.append(node)
            return _SENTINEL.format(site)
        if tag == "dict":
            return {key: self._build(value) for key, value in node.items()}
        return [self._build(value) for value in node]


class _Template:
    """The ``run_config`` and ``schedule`` lines of one structure: literal
    text around sites, each site a string with placeholders."""

    __slots__ = ("literals", "slots", "sites")

    def __init__(self, literals: list[str], slots: list[int], sites: list[str]) -> None:
        self.literals = literals
        self.slots = slots
        #: (factor name when the string is one whole placeholder, else None; the string)
        self.sites = [(whole_placeholder(source), source) for source in sites]

    def fill(self, named: dict[str, Any], scalar: Any) -> str | None:
        """The text for the named factors' values ``named`` (``scalar``
        renders one value); ``None`` when a site's value is not a plain scalar
        or cannot be computed."""
        texts = []
        for name, source in self.sites:
            text = site_text(name, source, named, scalar)
            if text is None:
                return None
            texts.append(text)
        literals = self.literals
        out = [literals[0]]
        for i, site in enumerate(self.slots, 1):
            out.append(texts[site])
            out.append(literals[i])
        return "".join(out)


def site_text(name: str | None, source: str, named: dict[str, Any], scalar: Any) -> str | None:
    """The text of one site: ``scalar`` of the value of ``source`` (the
    factor ``name``'s value when it is one whole placeholder) for the named
    factors' values ``named``; ``None`` when that value is not a plain
    scalar or cannot be computed."""
    try:
        value = named[name] if name is not None else interpolate(source, named)
    except (KeyError, PlaceholderError):
        return None
    if type(value) is not str and type(value) not in _PLAIN_SCALARS:
        return None  # a list or mapping: its block form depends on the place
    return scalar(value)


def _holds_nul(node: Any) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _cut(text: str, sites: list[str]) -> _Template | None:
    """``text`` cut at its sentinels; ``None`` unless each stands as a whole scalar."""
    pieces = _RENDERED.split(text)
    literals, slots = pieces[0::2], [int(s) for s in pieces[1::2]]
    if text.count(_MARK) != len(slots) or any(s >= len(sites) for s in slots):
        return None  # a sentinel inside another string (a uid in sensor ids...)
    for before, after in zip(literals, literals[1:]):
        if not (before.endswith((": ", "- ")) and after.startswith("\n")):
            return None
    return _Template(literals, slots, sites)


class TextTemplates:
    """The text of the ``run_config`` and ``schedule`` lines of run
    documents, from one template per structure (see the module docstring).

    ``expander`` is the :class:`~xdoe.design._expand.Expander` whose
    documents the text stands for. At most
    :data:`~xdoe.design._shared.MAX_INSTANCES` templates are kept (then
    forgotten in bulk), so memory stays flat.
    """

    def __init__(self, expander: Any, *, remember_levels: bool = False) -> None:
        self.expander = expander
        experiment = expander.experiment
        self.enabled = not _holds_nul(experiment.data)
        schedule_factors = set(experiment.aliases.values())
        #: named factors used only through placeholders: a template serves all their values
        self._filled = {n for n in expander.named if n not in schedule_factors}
        self._templates: dict[tuple, _Template | None] = {}
        self._scalars: dict[tuple, str] = {}
        #: a level's line under ``design_point.levels`` per (name, type, value), when
        #: ``remember_levels`` (levels that recur: a full factorial of several factors)
        self._lines: dict[tuple, str] | None = {} if remember_levels else None
        self.experiment_uid = experiment.model.uid

    def _key(self, levels: dict[str, Any]) -> tuple | None:
        parts: list[Any] = []
        filled = self._filled
        for name in self.expander.factor_names:
            if name not in levels:
                parts.append(0)
            elif name in filled:
                parts.append(1)
            else:
                try:
                    parts.append(canonical_json(levels[name]))  # typed: 1, 1.0 and true differ
                except (TypeError, ValueError):
                    return None
        return tuple(parts)

    def body(self, levels: dict[str, Any]) -> str | None:
        """The ``run_config`` and ``schedule`` lines of the run documents of
        a design point with ``levels`` (what ``dump_canonical`` writes for
        those keys of :meth:`Expander.document`), or ``None``: use the full
        writer."""
        template = self.template(levels)
        if template is None:
            return None
        expander = self.expander
        values = {**expander.controls, **levels}
        named = {name: values[name] for name in expander.named if name in values}
        return template.fill(named, self.scalar)  # type: ignore[union-attr]

    def template(self, levels: dict[str, Any]) -> _Template | None:
        """The template of the structure of a design point with ``levels``
        (literals around sites), ``None`` when none stands for its documents."""
        if not self.enabled:
            return None
        key = self._key(levels)
        if key is None:
            return None
        template = self._templates.get(key, _MISSING)
        if template is _MISSING:
            if len(self._templates) >= MAX_INSTANCES:
                self._templates.clear()
            template = self._templates[key] = self._make(levels)
        return template  # type: ignore[return-value]

    def filled(self, name: str) -> bool:
        """Whether the named factor ``name`` is used only through placeholders
        (one template serves all its values)."""
        return name in self._filled

    def scalar(self, value: Any) -> str:
        """``format_scalar(value)``, remembered per typed value (not for a
        float zero: ``0.0 == -0.0`` but they are written differently)."""
        if value == 0 and type(value) is float:
            return format_scalar(value)
        key = (type(value), value)
        text = self._scalars.get(key)
        if text is None:
            if len(self._scalars) >= MAX_INSTANCES:
                self._scalars.clear()
            text = self._scalars[key] = format_scalar(value)
        return text

    def head(self, index: int, repetition: int, levels: dict[str, Any]) -> str:
        """The ``design_point`` and ``experiment_uid`` lines of a run document,
        as :func:`dump_canonical` writes them."""
        lines = [f"design_point:\n  index: {index}\n"]
        if not levels:
            lines.append("  levels: {}\n")
        else:
            lines.append("  levels:\n")
            known = self._lines
            for name, value in sorted(levels.items()):
                kind = type(value)
                if kind is not str and kind not in _PLAIN_SCALARS:
                    return dump_canonical({"design_point": {"index": index, "repetition": repetition, "levels": levels},
                                           "experiment_uid": self.experiment_uid})
                if known is None or (kind is float and value == 0):  # 0.0 == -0.0, written differently
                    line = f"    {self.scalar(name)}: {self.scalar(value)}\n"
                else:
                    line = known.get((name, kind, value))
                    if line is None:
                        if len(known) >= MAX_INSTANCES:
                            known.clear()
                        line = known[(name, kind, value)] = f"    {self.scalar(name)}: {self.scalar(value)}\n"
                lines.append(line)
        lines.append(f"  repetition: {repetition}\nexperiment_uid: {self.scalar(self.experiment_uid)}\n")
        return "".join(lines)

    def tail(self, seed: int, uid: str) -> str:
        """The ``seed``, ``uid`` and ``version`` lines of a run document."""
        return f"seed: {seed}\nuid: {format_scalar(uid)}\nversion: {self.scalar(self.expander.version)}\n"

    def _make(self, levels: dict[str, Any]) -> _Template | None:
        expander = self.expander
        probe = _Probe()
        expander.probe = probe
        try:
            run_config, schedule = expander.body(levels)
        except Exception:  # noqa: BLE001 - _NoTemplate, or an error the full writer reports where it occurs
            return None
        finally:
            expander.probe = None
        for phase in schedule:
            for content in phase.values():
                uids = [str(e["environment"]["uid"]) for e in content["environments"]]
                names = [str(a["name"]) for a in content["agents"]]
                if any("\x00" in text for text in uids + names):
                    return None  # checked for duplicates with their values: the full writer
        text = dump_canonical({"run_config": run_config, "schedule": schedule}, cache=expander.render_cache)
        return _cut(text, probe.sites)
