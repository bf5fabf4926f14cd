"""Seconds one ``xrun optimize`` ask takes on a study of N trials in its
journal (TPE, three continuous factors): ``xdoe.design._optuna._ask``, which
lets the sampler work in an in-memory copy of the study and adds the asked
trial to the journal in one write (session 8: a kill inside an ask left a
half trial). Prints the median of 5 asks per N; run it with another
checkout's ``src`` on PYTHONPATH for the figure before.

    PYTHONPATH=src python benchmarks/bench_optuna_ask.py 100 400 1000
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time


def main(sizes: list[int]) -> None:
    import optuna

    from xdoe.design import Factor
    from xdoe.design._optuna import OptunaSettings, _ask, distributions, open_study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    factors = [Factor(f"x{i}", low=0.0, high=1.0) for i in range(3)]
    dists = distributions(factors)
    for n in sizes:
        settings = OptunaSettings(sampler="tpe", trials=n + 5, batch=1)
        with tempfile.TemporaryDirectory() as folder:
            study = open_study(os.path.join(folder, "study.journal"), "s", settings)
            rnd = random.Random(0)
            for _ in range(n):
                study.add_trial(optuna.trial.create_trial(params={f.name: rnd.random() for f in factors},
                                                          distributions=dists, value=rnd.random()))
            times = []
            for _ in range(5):
                start = time.perf_counter()
                trial = _ask(study, factors, settings, 1, dists)
                times.append(time.perf_counter() - start)
                study.tell(trial.number, 0.5)
        print(f"{n} trials: {statistics.median(times) * 1000:.1f} ms per ask (median of 5)")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 400, 1000])
