"""The analysis reads the design's coding from the manifest in the design's
factor order (regression: the manifest's JSON sorts the coding's keys, and
the points' coded values were once read in that sorted order)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from dummy_study import dummy_study

from xdoe.analysis._design_info import coded_frame, read_design
from xdoe.design.runfiles import generate


def test_coded_frame_follows_the_design_order_not_the_sorted_keys(tmp_path):
    factors = {n: {"levels": [0, 1]} for n in ("zeta", "alpha", "mid", "beta", "omega")}
    doc = dummy_study("order", 1, {"method": "fractional_factorial", "resolution": 3}, factors)
    runs, design = generate(doc, tmp_path / "out")
    table = pd.DataFrame([{**runs[k]["design_point"]["levels"], "design_point": runs[k]["design_point"]["index"]}
                          for k in range(len(runs))])
    info = read_design(tmp_path / "out", "order")
    names = sorted(factors)  # the analysis' column order need not be the design's either
    coded = coded_frame(table, names, info)
    expected = pd.DataFrame(design.coded(), columns=[f.name for f in design.factors])[names]
    assert np.array_equal(coded.to_numpy(), expected.to_numpy())
