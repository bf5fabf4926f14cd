"""Run files from text templates: the text of a run document is its
structure's template filled in.

The run documents of design points that choose the same schedule levels
differ only in their design point, seed and uid and where a named factor's
placeholder is filled in. So the whole document is rendered once per such
structure (:class:`TextTemplates`), with
:func:`~xdoe.documents.dump_canonical`, from a *probe* document in which every
string holding a placeholder, every named factor's level and the run's
index, repetition, seed and uid is a unique sentinel; the text is cut at the
sentinels, and each run fills in its rendering of those values.

Identical to ``dump_canonical`` of the built document by construction: the
text around the sites is ``dump_canonical``'s own output, and a site is
filled with ``format_scalar`` of the value the document holds there
(``interpolate(string, named)`` for a string with placeholders). A template
is used only where that equivalence holds; else the run's text is
``dump_canonical`` of its built document (:meth:`RunSequence.render
<xdoe.design.runfiles.RunSequence.render>`):

- every sentinel must stand as a whole scalar (``key: S`` or ``- S``); one
  that reached another string (an environment uid used in sensor ids) or a
  uid or agent name (checked for duplicates) disables the structure's
  template;
- a site whose value is not a plain scalar (a list or mapping level) makes
  that run's document built;
- the experiment's data must hold no NUL character, so no string of the
  document can look like a sentinel;
- any error while probing or filling (a missing conditional factor, ``$req``
  out of range...) leaves the run to its built document, which reports it.

``scripts/xgen_outputs.py`` compares the outputs of two versions of xgen
byte for byte; ``tests/design/test_template.py`` pins them.
"""

from __future__ import annotations

import re
from typing import Any

from xdoe.design.runfiles._shared import MAX_INSTANCES, ValueTexts
from xdoe.documents import (
    PlaceholderError,
    canonical_json,
    dump_canonical,
    format_scalar,
    interpolate,
    whole_placeholder,
)

__all__ = ["RUN_SITES", "TextTemplates"]

_SENTINEL = "\x00xdoe-site-{}\x00"
_MARK = "xdoe-site-"
#: a sentinel as dump_canonical writes it (NUL is escaped as \0 in a double-quoted scalar)
_RENDERED = re.compile(r'"\\0xdoe-site-(\d+)\\0"')
_PLAIN_SCALARS = (int, float, bool, type(None))
_MISSING = object()
#: the names of the run's own values among the sites' values (no factor name holds a NUL)
RUN_SITES = ("\x00index", "\x00repetition", "\x00seed", "\x00uid")


class _NoTemplate(Exception):
    """The probe cannot stand for the documents of this structure."""


class _Probe:
    """Builds definitions with a sentinel in place of every string holding a
    placeholder (set as the expander's ``probe`` while a template is made)."""

    def __init__(self) -> None:
        #: (the name whose value the site shows, or None; the string with placeholders)
        self.sites: list[tuple[str | None, str]] = []
        self._index: dict[tuple[str | None, str], int] = {}

    def sentinel(self, name: str | None, source: str) -> str:
        """The sentinel of the site showing value ``name`` (or ``source``
        interpolated); one site per distinct value, wherever it stands."""
        site = self._index.get((name, source))
        if site is None:
            site = self._index[(name, source)] = len(self.sites)
            self.sites.append((name, source))
        return _SENTINEL.format(site)

    def instance(self, compiled: tuple[str, Any], names: tuple[str, ...], named: dict[str, Any]) -> Any:
        if any(name not in named for name in names):
            raise _NoTemplate  # the built document reports the inactive conditional factor
        return self._build(compiled)

    def _build(self, compiled: tuple[str, Any]) -> Any:
        tag, node = compiled
        if tag == "const":
            return node
        if tag == "str":
            return self.sentinel(whole_placeholder(node), node)
        if tag == "dict":
            return {key: self._build(value) for key, value in node.items()}
        return [self._build(value) for value in node]


class _Template:
    """The text of the run documents of one structure: literal text around
    sites, each site a value by name or a string with placeholders."""

    __slots__ = ("literals", "slots", "sites", "_pieces", "_run_site")

    def __init__(self, literals: list[str], slots: list[int], sites: list[tuple[str | None, str]]) -> None:
        self.literals = literals
        self.slots = slots
        self.sites = sites
        #: the literals at the even places, the sites' texts go between them
        self._pieces: list[str] = [text for literal in literals for text in (literal, "")][:-1]
        #: per site: whether it shows one of the run's own values (new in every run: not remembered)
        self._run_site = [name in RUN_SITES for name, _ in sites]

    def fill(self, values: dict[str, Any], scalar_texts: ValueTexts | None = None) -> str | None:
        """The text for ``values`` (the named factors' values and
        :data:`RUN_SITES`); ``None`` when a site's value is not a plain scalar
        (a list or mapping: its block form depends on the place) or cannot be
        computed. ``scalar_texts``: ``format_scalar`` remembering the texts of
        recurring values (:class:`~xdoe.design.runfiles._shared.ValueTexts`)."""
        remembered = format_scalar if scalar_texts is None else scalar_texts
        texts = []
        for (name, source), run_site in zip(self.sites, self._run_site):
            try:
                value = values[name] if name is not None else interpolate(source, values)
            except (KeyError, PlaceholderError):
                return None
            if type(value) is not str and type(value) not in _PLAIN_SCALARS:
                return None
            texts.append(format_scalar(value) if run_site else remembered(value))
        out = self._pieces[:]
        out[1::2] = [texts[site] for site in self.slots]
        return "".join(out)


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


def _cut(text: str, sites: list[tuple[str | None, str]]) -> _Template | None:
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
    """One template of the run documents per structure (see the module
    docstring). ``expander`` is the :class:`~xdoe.design.runfiles._expand.Expander`
    whose documents the text stands for. At most
    :data:`~xdoe.design.runfiles._shared.MAX_INSTANCES` templates are kept (then
    forgotten in bulk), so memory stays flat.
    """

    def __init__(self, expander: Any) -> None:
        self.expander = expander
        experiment = expander.experiment
        self.enabled = not _holds_nul(experiment.data)
        schedule_factors = set(experiment.aliases.values())
        #: named factors used only through placeholders: a template serves all their values
        self._filled = {n for n in expander.named if n not in schedule_factors}
        self._templates: dict[tuple, _Template | None] = {}
        self._scalar_texts = ValueTexts(format_scalar)

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

    def fill(self, template: _Template, levels: dict[str, Any], run: tuple[int, int, int, str]) -> str | None:
        """The text of the run document of a design point with ``levels``
        and ``run`` = (index, repetition, seed, uid) from the ``template`` of
        its structure (:meth:`template`): what ``dump_canonical`` writes for
        :meth:`Expander.document`; ``None`` when a value has no place in it."""
        expander = self.expander
        values = {**expander.controls, **levels}
        named = {name: values[name] for name in expander.named if name in values}
        named.update(zip(RUN_SITES, run))
        return template.fill(named, self._scalar_texts)

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

    def _make(self, levels: dict[str, Any]) -> _Template | None:
        expander = self.expander
        probe = _Probe()
        expander.probe = probe
        try:
            run_config, schedule = expander.body(levels)
        except Exception:  # noqa: BLE001 - _NoTemplate, or an error the built document reports
            return None
        finally:
            expander.probe = None
        for phase in schedule:
            for content in phase.values():
                uids = [str(e["environment"]["uid"]) for e in content["environments"]]
                names = [str(a["name"]) for a in content["agents"]]
                if any("\x00" in text for text in uids + names):
                    return None  # checked for duplicates with their values: the built document
        index, repetition, seed, uid = (probe.sentinel(name, "") for name in RUN_SITES)
        shown = {name: probe.sentinel(name, "${%s}" % name) if name in self._filled else value
                 for name, value in levels.items()}
        document = {"uid": uid, "experiment_uid": expander.experiment.model.uid, "seed": seed,
                    "version": expander.version, "design_point": {"index": index, "repetition": repetition,
                                                                  "levels": shown},
                    "run_config": run_config, "schedule": schedule}
        return _cut(dump_canonical(document, cache=expander.render_cache), probe.sites)
