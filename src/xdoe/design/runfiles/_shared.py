"""Sub-trees shared by many run documents (:class:`SharedSubtrees`, the
expander's memory): built once, registered in the render cache so that
:func:`~xdoe.documents.dump_canonical` renders them once, and forgotten in
bulk beyond :data:`MAX_INSTANCES` so that memory stays flat. The texts of
recurring level values (:class:`ValueTexts`) are kept the same way."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["SharedSubtrees", "MAX_INSTANCES", "ValueTexts"]

#: definitions with placeholders kept built, per distinct values of their factors (then forgotten)
MAX_INSTANCES = 4096


class SharedSubtrees:
    """Mixin of :class:`~xdoe.design.runfiles._expand.Expander`: needs ``render_cache``
    (``{id(node): {}}``), ``_instances`` (key -> (value, registered ids)) and
    ``_seen`` (keys built once so far)."""

    render_cache: dict[int, dict]
    _instances: dict[tuple, tuple[Any, list[int]]]
    _seen: set[tuple]

    def _keep(self, key: tuple, value: Any) -> Any:
        """Share ``value`` under ``key`` (rendered once) until the instances
        are forgotten, from the second time ``key`` is built on: what occurs
        once (a definition using a factor that changes with every design
        point) costs one remembered key, not a rendered copy."""
        if key not in self._seen:
            if len(self._seen) >= MAX_INSTANCES:
                self._seen.clear()
            self._seen.add(key)
            return value
        if len(self._instances) >= MAX_INSTANCES:
            self._forget_instances()
        self._instances[key] = (value, self._register(value))
        return value

    def _shared_by_parts(self, slot: tuple, parts: list, value: Any) -> Any:
        """``value`` (made of ``parts``) shared per identity of its parts when
        every part is itself shared (kept alive, so its id stays its own);
        else ``value`` as it is."""
        cache = self.render_cache
        if not all(id(part) in cache for part in parts if part):
            return value
        key = (slot, *map(id, parts))
        hit = self._instances.get(key)
        return hit[0] if hit is not None else self._keep(key, value)

    def _register(self, value: Any) -> list[int]:
        """Put the containers of ``value`` not yet shared into :attr:`render_cache`;
        their ids (the caller keeps ``value`` alive while they are registered)."""
        added: list[int] = []
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, (dict, list)) and node and id(node) not in self.render_cache:
                self.render_cache[id(node)] = {}
                added.append(id(node))
                stack.extend(node.values() if isinstance(node, dict) else node)
        return added

    def _forget_instances(self) -> None:
        for _, added in self._instances.values():
            for ident in added:
                del self.render_cache[ident]
        self._instances.clear()


class ValueTexts:
    """``texts(value)``: ``make(value)``, remembered by the value's type and
    value, for the texts of levels that recur from run to run (a float's
    shortest ``repr`` costs ~20 times a dict look-up). ``make`` must depend
    on nothing but the type and the value. Not remembered: ``0.0``/``-0.0``
    (equal keys, two texts) and unhashable values (list and mapping levels).
    At most :data:`MAX_INSTANCES` texts are kept (then forgotten in bulk).
    """

    __slots__ = ("_make", "_texts")

    def __init__(self, make: Callable[[Any], str]) -> None:
        self._make = make
        self._texts: dict[tuple[type, Any], str] = {}

    def __call__(self, value: Any) -> str:
        kind = type(value)
        try:
            text = self._texts.get((kind, value))
        except TypeError:  # unhashable
            return self._make(value)
        if text is not None:
            return text
        text = self._make(value)
        if kind is not float or value != 0.0:
            if len(self._texts) >= MAX_INSTANCES:
                self._texts.clear()
            self._texts[kind, value] = text
        return text
