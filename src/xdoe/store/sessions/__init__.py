"""The session trees of a store, ``store.sessions`` (:mod:`._sessions`: the
tables and their queries). Private to :mod:`xdoe.store`, which exports what
callers need."""
