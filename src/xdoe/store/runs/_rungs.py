"""Rungs of pruned runs (``run_config.prune``, issue 37): the intermediate
values runs report and the decisions taken on them, one ``rung`` row each.

A run's decision at a rung reads only these rows of the *other* runs of its
experiment and phase (:meth:`Rungs.peer_rungs`): never the clock, never
whether a peer happens to have finished. A resumed instance takes the
decisions it recorded before (:meth:`Rungs.own_rungs`) instead of asking
again, so a killed campaign continues with the same decisions.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from sqlalchemy import func, insert, select

from xdoe.store.schema import _tables as t
from xdoe.store.schema._database import Database
from xdoe.store.schema._tables import utcnow

__all__ = ["Rungs", "RungRow", "PeerRungs"]


class RungRow(NamedTuple):
    """One recorded rung: its index, the phase step, the value (NaN: not a
    number), whether the run was pruned there and how many peers the
    decision saw."""

    rung: int
    step: int
    value: float
    pruned: bool
    peers: int


class PeerRungs(NamedTuple):
    """Another run's rungs up to the one asked about: its uid, ``values``
    (rung -> value, NaN for a missing one) and whether it was pruned at the
    rung asked about."""

    run: str
    values: dict[int, float]
    pruned: bool


def _value(v: Any) -> float:
    return float("nan") if v is None else float(v)


class Rungs:
    """The ``rung`` table of a store, ``store.rungs``.

    Args:
        db: the store's database (shared with the other parts).
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def record_rung(self, instance_id: int, phase_index: int, row: RungRow) -> None:
        """Record a rung of ``instance_id``'s phase ``phase_index`` (once:
        a resumed instance reads it back with :meth:`own_rungs`).

        Raises:
            StoreError: the store cannot be written.
        """
        value = None if math.isnan(row.value) else float(row.value)

        def body(conn: Any) -> None:
            exists = conn.execute(select(t.rung.c.id).where(
                t.rung.c.instance_id == instance_id, t.rung.c.phase_index == phase_index,
                t.rung.c.rung == row.rung)).first()
            if exists is None:
                conn.execute(insert(t.rung).values(
                    instance_id=instance_id, phase_index=phase_index, rung=row.rung, step=row.step, value=value,
                    pruned=bool(row.pruned), peers=int(row.peers), created=utcnow()))

        self._db.write_again("record a rung in", body)

    def own_rungs(self, instance_id: int, phase_index: int) -> dict[int, RungRow]:
        """The rungs ``instance_id`` recorded in phase ``phase_index``: rung -> row."""
        c = t.rung.c
        with self._db.read("read rungs from") as conn:
            rows = conn.execute(select(c.rung, c.step, c.value, c.pruned, c.peers)
                                .where(c.instance_id == instance_id, c.phase_index == phase_index)).all()
        return {int(r.rung): RungRow(int(r.rung), int(r.step), _value(r.value), bool(r.pruned), int(r.peers))
                for r in rows}

    def peer_rungs(self, experiment: str | None, phase_index: int, rung: int, run_uid: str) -> list[PeerRungs]:
        """The runs of ``experiment`` other than ``run_uid`` that recorded
        rung ``rung`` of phase ``phase_index``, each with its values at rungs
        ``0..rung`` (of its newest instance that reached ``rung``), sorted by
        run uid. ``[]`` without an experiment.

        Raises:
            StoreError: the store cannot be read.
        """
        if experiment is None:
            return []
        c, i, r, e = t.rung.c, t.run_instance.c, t.run.c, t.experiment.c
        stmt = (select(r.uid, c.instance_id, c.rung, c.value, c.pruned)
                .select_from(t.rung).join(t.run_instance, c.instance_id == i.id).join(t.run, i.run_id == r.id)
                .join(t.experiment, r.experiment_id == e.id)
                .where(e.uid == experiment, c.phase_index == phase_index, c.rung <= rung, r.uid != run_uid))
        with self._db.read("read rungs from") as conn:
            rows = conn.execute(stmt).all()
        chosen: dict[str, int] = {}  # run uid -> its newest instance that reached the rung
        for row in rows:
            if row.rung == rung and row.instance_id > chosen.get(row.uid, -1):
                chosen[row.uid] = int(row.instance_id)
        peers: dict[str, PeerRungs] = {uid: PeerRungs(uid, {}, False) for uid in chosen}
        for row in rows:
            if chosen.get(row.uid) == row.instance_id:
                peers[row.uid].values[int(row.rung)] = _value(row.value)
                if row.rung == rung and row.pruned:
                    peers[row.uid] = peers[row.uid]._replace(pruned=True)
        return [peers[uid] for uid in sorted(peers)]

    def pruned_runs(self, experiment: str | None = None) -> list[str]:
        """The uids of the runs (of ``experiment``) whose newest done
        instance — the one the results table reads — was pruned, sorted:
        what ``xrun optimize`` tells the study (a trial pruned, with its rung
        values). The analysis reads the same choice off the results table
        (:func:`~xdoe.store.views._export.left_out_runs`, status ``pruned``).

        Raises:
            StoreError: the store cannot be read.
        """
        from xdoe.store._rules import DONE_STATUSES

        i, r, e = t.run_instance.c, t.run.c, t.experiment.c
        newest = (select(r.uid.label("uid"), func.max(i.id).label("iid")).select_from(t.run_instance)
                  .join(t.run, i.run_id == r.id).where(i.status.in_(DONE_STATUSES)))
        if experiment is not None:
            newest = newest.join(t.experiment, r.experiment_id == e.id).where(e.uid == experiment)
        sub = newest.group_by(r.uid).subquery()
        stmt = (select(sub.c.uid).select_from(sub).join(t.run_instance, i.id == sub.c.iid)
                .where(i.status == "pruned").order_by(sub.c.uid))
        with self._db.read("read run instances from") as conn:
            return [str(u) for u in conn.execute(stmt).scalars()]

    def run_rungs(self, experiment: str | None) -> dict[str, dict[int, tuple[int, float]]]:
        """Of each run of ``experiment`` that recorded rungs, those of its
        newest instance that did: run uid -> rung -> ``(step, value)``
        (NaN for a missing value). ``{}`` without an experiment.

        Raises:
            StoreError: the store cannot be read.
        """
        if experiment is None:
            return {}
        c, i, r, e = t.rung.c, t.run_instance.c, t.run.c, t.experiment.c
        stmt = (select(r.uid, c.instance_id, c.rung, c.step, c.value)
                .select_from(t.rung).join(t.run_instance, c.instance_id == i.id).join(t.run, i.run_id == r.id)
                .join(t.experiment, r.experiment_id == e.id).where(e.uid == experiment))
        with self._db.read("read rungs from") as conn:
            rows = conn.execute(stmt).all()
        newest: dict[str, int] = {}
        for row in rows:
            newest[row.uid] = max(newest.get(row.uid, -1), int(row.instance_id))
        out: dict[str, dict[int, tuple[int, float]]] = {}
        for row in rows:
            if newest[row.uid] == row.instance_id:
                out.setdefault(str(row.uid), {})[int(row.rung)] = (int(row.step), _value(row.value))
        return out

    def phase_episode_values(self, phase_id: int, agent: str, metric: str) -> list[tuple[int, float]]:
        """``(steps, metric)`` of every episode ``agent`` recorded in the
        phase row ``phase_id``, in the order recorded (what a resumed run's
        pruning rule reads back of the episodes it kept)."""
        c = t.episode.c
        column = c.reward if metric == "reward" else c.objective
        with self._db.read("read episodes from") as conn:
            rows = conn.execute(select(c.steps, column).where(c.phase_id == phase_id, c.agent == agent)
                                .order_by(c.id)).all()
        return [(int(s), _value(v)) for s, v in rows]
