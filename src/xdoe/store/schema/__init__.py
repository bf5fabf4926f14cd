"""The store's schema: the Core tables (:mod:`._tables`), the ORM models
mapped onto them (:mod:`._models`), the engine and URL helpers
(:mod:`._engine`), the :class:`~xdoe.store.schema._database.Database` every
part of the store runs its transactions in, the schema version, creation and
upgrades (:mod:`._schema`, ``migrations/``). Private to :mod:`xdoe.store`,
which exports what callers need."""
