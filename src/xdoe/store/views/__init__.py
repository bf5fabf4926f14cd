"""The read views of a store, ``store.views`` (:mod:`._views`): status,
export, the results table, per-run scores, learning curves, lineage, the
dashboard's pages, one module each. Private to :mod:`xdoe.store`, which
exports what callers need."""
