"""The recorder: :class:`~xdoe.store.RunRecorder`, which writes every row of
one run instance, its ``store_steps`` policy (:mod:`._steps`) and its results
files (:mod:`._results`, :mod:`._results_paths`). Private to
:mod:`xdoe.store`, which exports what callers need."""
