"""The campaign's results as a pandas DataFrame, for notebooks::

    import xdoe.results
    df = xdoe.results.load("sqlite:///_outputs/xrun.sqlite")        # or a Store

One row per episode, worker and agent (the rows of ``xrun export``), the
factor levels as columns with readable values (a schedule level ``["learner"]``
reads ``learner``; an inactive conditional factor is missing: ``None``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.store import Store

__all__ = ["load", "readable", "levels_text", "FACTORS_ATTR"]

#: ``df.attrs`` key listing the factor columns of a :func:`load` frame
FACTORS_ATTR = "xdoe_factors"


def readable(level: Any) -> Any:
    """A factor level as people read it: numbers and strings unchanged, a
    list of keys joined with ``+`` (``["learner"]`` -> ``learner``), any other
    structure as compact JSON, ``None`` unchanged."""
    if isinstance(level, list) and all(isinstance(x, str) for x in level):
        return "+".join(level)
    if isinstance(level, (list, dict)):
        return json.dumps(level, sort_keys=True, separators=(",", ":"))
    return level


def levels_text(levels: dict[str, Any] | None) -> str:
    """``agent=learner, alpha=0.5`` (readable levels; empty for none)."""
    return ", ".join(f"{name}={readable(value)}" for name, value in (levels or {}).items())


def load(store: "Store | str | None" = None, experiment: str | None = None) -> "pd.DataFrame":
    """Every episode of the store (or of ``experiment``) as a DataFrame.

    Args:
        store: a :class:`~xdoe.store.Store`, a store URL, or ``None`` for the
            default store (``$XRUN_STORE`` or ``sqlite:///_outputs/xrun.sqlite``).
        experiment: only this experiment's runs.

    Returns:
        Columns ``experiment, run, design_point, repetition, seed``, one per
        factor, ``phase, mode, worker, episode, agent, steps, reward,
        objective, wall_time`` (seconds), ``terminated, truncated`` (booleans,
        ``None`` when not recorded), ``cut_by`` (what cut a truncated episode:
        see :mod:`xdoe._cuts`); ``df.attrs["xdoe_factors"]`` lists the
        factor columns. Of each run the latest finished instance (as ``xrun export``).

    Raises:
        InputError: ``experiment`` is not in the store.
        NoStoreError: there is no store at the URL (none is created).
        StoreError: the store cannot be read.
    """
    import pandas as pd

    from xdoe.store import Store, episode_table

    own = not isinstance(store, Store)
    st = Store(store, create=False) if own else store  # reading never creates a store
    try:
        table = episode_table(st, experiment)
    finally:
        if own:
            st.close()
    frame = pd.DataFrame.from_records(table.rows, columns=list(table.columns))
    for name in table.factors:
        frame[name] = frame[name].map(readable).astype(object)
    frame.attrs[FACTORS_ATTR] = list(table.factors)
    return frame
