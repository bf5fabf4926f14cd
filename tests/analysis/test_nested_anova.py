"""A conditional factor is a term of the model that tests the other factors:
its variation is not their residual. ``x1`` (applies when ``kind`` is
``peak``) moves the response by 4 where it applies; ``k`` adds +1 everywhere,
against a run-to-run sd near 0.2. Before, the other factors' ANOVA left
``x1`` out, its 4-unit swings became their residual, and ``k`` read
p = 0.2: a real effect called noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from doe_truth import nested_document, run_folder
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate


def test_the_others_are_tested_against_the_model_with_the_nested_factor(tmp_path: Path) -> None:
    import statsmodels.formula.api as smf
    from scipy import stats

    from xdoe.analysis import analyze, load_scores, parse_response, run_table

    out = tmp_path / "_outputs"
    generate(nested_document(), out)
    url = run_folder(out)
    done = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    body = json.loads(done.stdout)
    assert "nested within their condition" in body["methods"]["factors"]
    got = {f["name"]: f for f in body["factors"]}
    assert got["x1"]["kind"] == "nested" and got["k"]["p"] < 1e-6 and got["kind"]["p"] < 1e-6
    # statsmodels: each term against the model of every term that does not contain it (x1 contains kind)
    table = run_table(load_scores(url, parse_response(None), "nested"), parse_response(None))[0]
    data = table.assign(x1=[str(v) if v == v else "-" for v in table["x1"]], k=table["k"].astype(str))
    full = smf.ols("y ~ C(kind) + C(k) + C(kind):C(k) + C(x1)", data=data).fit()
    for term, reduced in (("k", "C(kind) + C(x1)"), ("kind", "C(k)")):
        small, large = (smf.ols(f"y ~ {reduced}", data=data).fit(),
                        smf.ols(f"y ~ {reduced} + C({term})", data=data).fit())
        df = small.df_resid - large.df_resid
        F = (small.ssr - large.ssr) / df / (full.ssr / full.df_resid)
        assert got[term]["F"] == pytest.approx(F, rel=1e-10)
        assert got[term]["df"] == [df, full.df_resid]
        assert got[term]["p"] == pytest.approx(stats.f.sf(F, df, full.df_resid), rel=1e-8)
    # the notebook on the episodes answers the same
    nb = {f.name: f for f in analyze(load_scores(url, parse_response(None), "nested")).factors}
    assert nb["k"].F == pytest.approx(got["k"]["F"], rel=1e-12)
