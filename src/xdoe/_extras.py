"""Which optional extra of the distribution brings which module.

The core install (``pip install xdoe``) is what ``xgen`` and ``xrun
experiment-start`` need; everything else is an extra named in
``pyproject.toml``. A command that reaches a module of a missing extra says
which extra to install (:func:`missing_extra`).
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "missing_extra", "installed"]

#: top-level module -> the extra that installs it
EXTRAS = {
    "pandas": "analysis", "statsmodels": "analysis", "matplotlib": "analysis",
    "fastapi": "dashboard", "uvicorn": "dashboard", "jinja2": "dashboard", "plotly": "dashboard",
    "stable_baselines3": "sb3", "torch": "sb3",
    "pettingzoo": "pettingzoo", "pygame": "pettingzoo",
    "psycopg": "postgres",
    "pyarrow": "parquet",
    "dask": "dask", "distributed": "dask",
    "alembic": "migrate", "mako": "migrate",
    "optuna": "optuna",
    "tensorboard": "tensorboard", "mlflow": "mlflow",
}


def missing_extra(exc: ImportError) -> str | None:
    """``error`` text naming the extra to install when ``exc`` is a module of
    one of our extras that is not installed, else ``None``."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return None
    return f"this needs the {extra!r} extra ({name} is not installed): pip install 'xdoe[{extra}]'"


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
