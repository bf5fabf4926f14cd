"""Sensitivity analyses of Morris and Saltelli designs through SALib (the
``analysis`` extra): Morris's ``mu*`` (mean absolute elementary effect,
Campolongo et al. 2007) and ``sigma`` with a bootstrap interval of ``mu*``
(``SALib.analyze.morris``); first-order and total Sobol' indices with
bootstrap intervals (``SALib.analyze.sobol``, Saltelli 2002, Jansen 1999).

The design points must be the design's, in its order, each with a response
(the mean over its repetitions): SALib reads the structure from the order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xdoe.errors import InputError

__all__ = ["sensitivity", "plot_morris"]


def sensitivity(method: str, unit: np.ndarray, y: np.ndarray, names: list[str], info: dict[str, Any],
                seed: int = 0) -> list[dict[str, Any]]:
    """Per factor ``{"name", "mu_star", "mu_star_conf", "sigma", "mu"}``
    (Morris) or ``{"name", "S1", "S1_conf", "ST", "ST_conf"}`` (Saltelli;
    ``conf``: half-width of the 95 % bootstrap interval), strongest first.

    Args:
        method: ``morris`` or ``saltelli``.
        unit: ``(n, d)`` unit positions of the design points, in design order.
        y: ``(n,)`` responses.
        info: the design's ``info`` (``levels`` of Morris, ``second_order``).
        seed: seed of SALib's bootstrap (a ``numpy.random.Generator`` from it).

    Raises:
        InputError: SALib missing, or not every design point has a response.
    """
    try:
        from SALib.analyze import morris, sobol
    except ImportError:
        from xdoe._extras import install_command

        raise InputError(f"the {method} analysis needs SALib: {install_command('analysis')}") from None
    if not np.all(np.isfinite(y)):
        raise InputError(f"the {method} analysis needs a response at every design point (run all of them)")
    problem = {"num_vars": len(names), "names": list(names), "bounds": [[0.0, 1.0]] * len(names)}
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(24,)))
    if method == "morris":
        res = morris.analyze(problem, unit, y, num_levels=int(info.get("levels", 4)), seed=rng)
        rows = [{"name": n, "mu_star": float(res["mu_star"][i]), "mu_star_conf": float(res["mu_star_conf"][i]),
                 "sigma": float(res["sigma"][i]), "mu": float(res["mu"][i])} for i, n in enumerate(names)]
        return sorted(rows, key=lambda r: -r["mu_star"])
    res = sobol.analyze(problem, y, calc_second_order=bool(info.get("second_order", False)), seed=rng)
    rows = [{"name": n, "S1": float(res["S1"][i]), "S1_conf": float(res["S1_conf"][i]),
             "ST": float(res["ST"][i]), "ST_conf": float(res["ST_conf"][i])} for i, n in enumerate(names)]
    return sorted(rows, key=lambda r: -r["ST"])


def plot_morris(rows: list[dict[str, Any]], path: Any, *, title: str) -> Any:
    """The mu*-sigma plot (Morris 1991; Campolongo et al. 2007): one labelled
    point per factor with its ``mu*`` bootstrap interval, and the line
    ``sigma = mu*`` (above it, interactions or non-linearity dominate)."""
    from xdoe.analysis._figure import PALETTE, new_figure, save

    fig = new_figure(6.5, 5, svg=str(path).lower().endswith(".svg"))
    ax = fig.add_subplot()
    mu = np.array([r["mu_star"] for r in rows])
    sd = np.array([r["sigma"] for r in rows])
    conf = np.array([r["mu_star_conf"] for r in rows])
    ax.errorbar(mu, sd, xerr=conf, fmt="o", color=PALETTE[0], ecolor="#999999", capsize=3, zorder=3)
    for r in rows:
        ax.annotate(r["name"], (r["mu_star"], r["sigma"]), textcoords="offset points", xytext=(6, 4), fontsize=9)
    top = max(float(mu.max() + conf.max()), float(sd.max()), 1e-12) * 1.1
    ax.plot([0, top], [0, top], color=PALETTE[1], lw=1, ls="--", label="sigma = mu*")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("mu* (mean |elementary effect|)")
    ax.set_ylabel("sigma (sd of elementary effects)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return save(fig, path)
