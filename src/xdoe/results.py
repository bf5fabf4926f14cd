"""The campaign's results as a pandas DataFrame, for notebooks::

    import xdoe.results
    df = xdoe.results.load("sqlite:///_outputs/xrun.sqlite")        # or a Store

One row per episode, worker and agent (the rows of ``xrun export``), the
factor levels as columns with readable values (a schedule level ``["learner"]``
reads ``learner``; an inactive conditional factor is missing: ``None``).

One experiment at a time, as on the command line: a store holding runs of
several experiments needs ``experiment="UID"`` (without it
:class:`~xdoe.errors.AmbiguousExperimentError` lists them), so the results of
two studies are never pooled into one answer by accident.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import pandas as pd

    from xdoe.store import Store

__all__ = ["DESIGN_ATTR", "LEFT_OUT_ATTR", "load", "table_frame", "readable", "levels_text", "experiment_label", "single_experiment",
           "frame_experiment", "FACTORS_ATTR"]

#: ``df.attrs`` key listing the factor columns of a :func:`load` frame
FACTORS_ATTR = "xdoe_factors"
#: ``df.attrs`` key of the design the runs come from as the store recorded it
#: (:meth:`store.runs.experiment_design <xdoe.store.runs._runs.Runs.experiment_design>`: method, every factor's coding, blocks)
DESIGN_ATTR = "xdoe_design"
#: ``df.attrs`` key: the design's runs whose chosen instance did not finish, run uid -> its status:
#: ``pruned`` (its ``run_config.prune`` rule ended it early), or ``failed``, ``interrupted``, ``running``, ...
#: when no instance of the run is done. Their episodes are in the frame (as ``xrun export`` writes them);
#: the analysis leaves them out of every response and says so (:func:`xdoe.analysis.left_out_notes`)
LEFT_OUT_ATTR = "xdoe_left_out"


def readable(level: Any) -> Any:
    """A factor level as people read it (:func:`xdoe.documents.readable_level`)."""
    from xdoe.documents import readable_level

    return readable_level(level)


def levels_text(levels: dict[str, Any] | None) -> str:
    """``agent=learner, alpha=0.5`` (readable levels; empty for none)."""
    return ", ".join(f"{name}={readable(value)}" for name, value in (levels or {}).items())


def experiment_label(frame: "pd.DataFrame") -> str:
    """The experiment of a :func:`load` frame as titles name it: its uid
    (``taxi-study``), several joined with ``+`` (only for a frame put
    together by hand: :func:`load` reads one experiment), ``(no experiment)``
    when the runs name none."""
    uids = sorted({str(e) for e in frame["experiment"].dropna().unique()}) if "experiment" in frame else []
    return " + ".join(uids) or "(no experiment)"


def single_experiment(store: "Store", experiment: str | None) -> str | None:
    """The experiment a read of the open ``store`` answers: ``experiment``
    when given (checked by the read itself), else ``None`` (every run) when
    the store holds runs of at most one experiment.

    Raises:
        AmbiguousExperimentError: no ``experiment`` and the store holds runs
            of several (``.experiments`` lists them).
        StoreError: the store cannot be read.
    """
    from xdoe.errors import AmbiguousExperimentError

    if experiment is None:
        uids = store.runs.experiments()
        if len(uids) > 1:
            raise AmbiguousExperimentError(uids, f"store {store.url}")
    return experiment


def frame_experiment(frame: "pd.DataFrame") -> str | None:
    """The one experiment uid of a :func:`load` (or
    :func:`xdoe.analysis.load_scores`) frame's ``experiment`` column;
    ``None`` when its runs name none (or it has no such column).

    Raises:
        AmbiguousExperimentError: the frame holds rows of several
            experiments (``.experiments`` lists them).
    """
    from xdoe.errors import AmbiguousExperimentError

    if "experiment" not in frame.columns:
        return None
    uids = sorted({str(e) for e in frame["experiment"].dropna().unique()})
    if len(uids) > 1:
        raise AmbiguousExperimentError(
            uids, "the frame", f'keep one experiment\'s rows (frame[frame["experiment"] == "{uids[0]}"]) or '
                               f'load one with xdoe.results.load(store, experiment="UID") (on the command '
                               f'line: -e UID)')
    return uids[0] if uids else None


def load(store: "Store | str | None" = None, experiment: str | None = None, *,
         include_branches: bool = False) -> "pd.DataFrame":
    """Every episode of the design's runs in the store (or of ``experiment``)
    as a DataFrame. Sessions of a session tree (``xrun branch``/``grow``) are
    not runs of the design and are left out.

    Args:
        store: a :class:`~xdoe.store.Store`, a store URL, or ``None`` for the
            default store (``$XRUN_STORE`` or ``sqlite:///_outputs/xrun.sqlite``).
        experiment: only this experiment's runs; needed when the store holds
            runs of several experiments.
        include_branches: add the sessions of the trees rooted in these runs
            after the design's rows, with no design point and no factor
            levels, and a last column ``branch`` labelling them
            (``"taxi-study-0000 + brain.params.alpha=0.25"``; ``None`` for
            the design's runs).

    Returns:
        One experiment's episodes, named in its ``experiment`` column
        (:func:`frame_experiment`). Columns ``experiment, run, design_point, repetition, seed``, one per
        factor, ``phase, mode, worker, episode, agent, steps, reward,
        objective, wall_time`` (seconds), ``terminated, truncated`` (booleans,
        ``None`` when not recorded), ``cut_by`` (what cut a truncated episode:
        see :mod:`xdoe._cuts`); ``df.attrs["xdoe_factors"]`` lists the
        factor columns (and ``branch`` with ``include_branches``), and
        of each run the latest finished (or pruned) instance (as ``xrun
        export``), else its latest instance, whatever its status;
        ``df.attrs["xdoe_left_out"]`` (:data:`LEFT_OUT_ATTR`) maps the runs
        whose chosen instance did not finish to its status (``pruned``, or
        ``failed``, ``interrupted``, ``running``, ...): their episodes are here
        and the analysis leaves them out.

    Raises:
        AmbiguousExperimentError: no ``experiment`` and the store holds runs
            of several (an :class:`~xdoe.errors.InputError`; the message and
            ``.experiments`` list them).
        InputError: ``experiment`` is not in the store.
        NoStoreError: there is no store at the URL (none is created).
        StoreError: the store cannot be read.
    """
    return table_frame(store, lambda st: st.views.episode_table(single_experiment(st, experiment),
                                                          include_branches=include_branches))


def table_frame(store: "Store | str | None", read: "Callable[[Store], Any]") -> "pd.DataFrame":
    """The table ``read(store)`` answers (``rows``, ``columns``, ``factors``,
    as :meth:`store.views.episode_table <xdoe.store.views._views.Views.episode_table>` and
    :meth:`store.views.run_scores <xdoe.store.views._views.Views.run_scores>` give) as a DataFrame whose factor
    columns hold readable levels; ``df.attrs["xdoe_factors"]`` lists them.
    ``store`` as :func:`load` takes it: a URL is opened read-only (reading
    never writes or creates a store) and closed again.

    Raises:
        NoStoreError, StoreError: as ``read`` and :class:`~xdoe.store.Store` raise them.
    """
    import pandas as pd

    from xdoe.store import Store

    own = not isinstance(store, Store)
    st = Store(store, read_only=True) if own else store
    try:
        table = read(st)
        frame = pd.DataFrame.from_records(table.rows, columns=list(table.columns))
        uids = frame["experiment"].dropna().unique() if "experiment" in frame else []
        # the design's coding, so that every reader signs effects as xgen coded them (issue 32)
        design = st.runs.experiment_design(str(uids[0])) if len(uids) == 1 else None
    finally:
        if own:
            st.close()
    for name in table.factors:
        frame[name] = frame[name].map(readable).astype(object)
    frame.attrs[FACTORS_ATTR] = list(table.factors)
    frame.attrs[LEFT_OUT_ATTR] = dict(getattr(table, "left_out", {}))  # their episodes stop where they stopped
    if design is not None:
        frame.attrs[DESIGN_ATTR] = design
    return frame
