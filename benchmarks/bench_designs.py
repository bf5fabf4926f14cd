"""Speed and quality of the design algorithms (xdoe.design).

Run: ``python benchmarks/bench_designs.py [--repeats R]``. Prints

* categorical maximin from the 4096-point full factorial of 6 factors x 4
  levels, n = 50 and n = 200: time (first call and best/median of repeats
  over seeds), minimum distance of the unit-scaled levels and the largest
  level-count imbalance (targets: < 0.1 s, >= 0.816 / >= 0.577, imbalance <= 1);
* maximin Latin hypercube by ESE for (n, d) = (20, 2), (50, 5), (100, 10):
  time, minimum distance and percentage of the best known cell-centred
  value (van Dam et al., spacefillingdesigns.nl; target >= 90 % in < 2 s);
* a categorical maximin from the 10^5-point full factorial of 5 factors x 10
  levels (n = 100), to show it scales.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from xdoe.design import Factor, latin_hypercube, maximin

BEST_KNOWN = {(20, 2): 0.2121, (50, 5): 0.5776, (100, 10): 1.0116}


def imbalance(points: np.ndarray, factors) -> int:
    worst = 0
    for j, f in enumerate(factors):
        c = np.bincount(points[:, j].astype(int), minlength=len(f.levels))
        worst = max(worst, int(c.max() - c.min()))
    return worst


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def categorical(label: str, ks: list[int], ns: list[int], repeats: int) -> None:
    factors = [Factor(f"f{i}", levels=tuple(range(k))) for i, k in enumerate(ks)]
    size = int(np.prod(ks))
    print(f"categorical maximin, {label} = {size} points")
    for n in ns:
        times, dists, imbs = [], [], []
        for seed in range(repeats):
            design, seconds = timed(maximin, factors, {"n": n}, seed)
            points = design.points
            times.append(seconds)
            dists.append(design.min_distance)
            imbs.append(imbalance(points, factors))
        print(
            f"  n={n:4d}  seed 0: {times[0]:.3f} s  min distance {dists[0]:.4f}  imbalance {imbs[0]}"
            f"  | {repeats} seeds: time median {statistics.median(times):.3f} s"
            f" max {max(times):.3f} s, min distance min {min(dists):.4f} median"
            f" {statistics.median(dists):.4f}, max imbalance {max(imbs)}"
        )


def ese(repeats: int) -> None:
    print("maximin Latin hypercube (ESE), continuous factors, cell centres")
    for (n, d), best in BEST_KNOWN.items():
        factors = [Factor(f"x{i}", low=0.0, high=1.0) for i in range(d)]
        times, dists = [], []
        for seed in range(repeats):
            design, seconds = timed(maximin, factors, {"n": n}, seed)
            times.append(seconds)
            dists.append(design.min_distance)
        lhs = latin_hypercube(factors, {"n": n}, 0).min_distance
        print(
            f"  n={n:3d} d={d:2d}: time median {statistics.median(times):.2f} s max {max(times):.2f} s,"
            f" min distance median {statistics.median(dists):.4f} (worst {min(dists):.4f}) ="
            f" {100 * statistics.median(dists) / best:.1f} % (worst {100 * min(dists) / best:.1f} %)"
            f" of best known {best}; plain LHS {lhs:.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="seeds per case")
    args = parser.parse_args()
    categorical("6 factors x 4 levels", [4] * 6, [50, 200], args.repeats)
    categorical("5 factors x 10 levels", [10] * 5, [100], max(1, args.repeats // 2))
    ese(max(1, args.repeats // 2))


if __name__ == "__main__":
    main()
