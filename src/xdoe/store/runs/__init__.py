"""The run parts of a store: ``store.runs`` (runs, instances, claims, stop
requests: :mod:`._runs`), ``store.checkpoints`` (:mod:`._checkpoints`),
``store.rungs`` (:mod:`._rungs`) and the records they return
(:mod:`._records`). Private to :mod:`xdoe.store`, which exports what callers
need."""
