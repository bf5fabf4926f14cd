"""The type II ANOVA of a full factorial (no two-level screening model) on a
known, noise-free truth through xgen, the executor, the store and ``xrun
analyze``: the factor with no effect and every interaction are exactly null
(F 0, p 1, never a test of rounding residue), the planted ones have p 0, and
every factor's level means are listed low to high in the document's order."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from doe_truth import CATEGORICAL, categorical_document, run_folder
from xdoe.cli._xrun import main as xrun
from xdoe.design.runfiles import generate


@pytest.fixture(scope="module")
def analysis(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("anova") / "out"
    generate(categorical_document(), out)
    run_folder(out)
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_null_factor_and_interactions_are_exactly_null_and_the_planted_ones_certain(analysis):
    factors = {f["name"]: f for f in analysis["factors"]}
    assert factors["a"]["effect"] == pytest.approx(5.0) and factors["a"]["p"] == 0.0
    assert factors["b"]["effect"] == pytest.approx(2.0) and factors["b"]["p"] == 0.0
    assert factors["c"]["effect"] == pytest.approx(0.0, abs=1e-12)
    assert (factors["c"]["F"], factors["c"]["p"], factors["c"]["eta_sq"]) == (0.0, 1.0, 0.0)
    assert analysis["interactions"]
    for row in analysis["interactions"]:
        assert (row["F"], row["p"]) == (0.0, 1.0)


def test_level_means_are_listed_in_the_documents_order(analysis):
    levels = {f["name"]: [(lv["level"], lv["mean"]) for lv in f["levels"]] for f in analysis["factors"]}
    assert [lv for lv, _ in levels["a"]] == ["lo", "mid", "hi"]
    assert [m for _, m in levels["a"]] == pytest.approx([3 + v for v in CATEGORICAL.values()])  # b averages 0
    assert [lv for lv, _ in levels["b"]] == [2, 1]  # low (the first level) to high
    assert [lv for lv, _ in levels["c"]] == ["x", "y"]


def test_a_two_level_factor_is_signed_by_the_documents_level_order(tmp_path):
    """``b`` listed ``[1, 2]``: its second level is 2 lower than its first, so its effect is -2, the sign
    a two-level design gives (second minus first level mean); a three-level factor keeps the range (+5).
    Before, every categorical effect was the unsigned range: +2 whichever way the levels were listed."""
    document = categorical_document()
    document["factors"]["b"]["levels"] = [1, 2]
    out = tmp_path / "out"
    generate(document, out)
    run_folder(out)
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    factors = {f["name"]: f for f in json.loads(result.stdout)["factors"]}
    means = [lv["mean"] for lv in factors["b"]["levels"]]
    assert [lv["level"] for lv in factors["b"]["levels"]] == [1, 2]
    assert factors["b"]["effect"] == pytest.approx(means[1] - means[0]) == pytest.approx(-2.0)
    assert factors["a"]["effect"] == pytest.approx(5.0)


def test_an_interaction_aliased_with_a_factor_is_left_out_of_the_anova(tmp_path) -> None:
    """A resolution III fraction (``x4 = x1 x2``, ``x5 = x1 x3``) with three of its points
    replicated in a block (``xgen augment --replicate``) is answered by the type II ANOVA,
    whose model held the interactions ``x1 x x2`` (that is ``x4``) and ``x1 x x4`` (``x2``): rank 8
    for 13 parameters, and ``anova_lm`` gave ``x4`` F = -14980. Only interactions that add columns
    of their own enter; every F is then statsmodels' of that full-rank model."""
    import statsmodels.formula.api as smf
    import yaml
    from statsmodels.stats.anova import anova_lm

    from doe_truth import interaction_document
    from xdoe.analysis import load_scores, parse_response, run_table
    from xdoe.cli._xgen import main as xgen

    out = tmp_path / "out"
    doc = tmp_path / "exp.yaml"
    doc.write_text(yaml.safe_dump(interaction_document()))
    generate(interaction_document(), out)
    run_folder(out)
    done = CliRunner().invoke(xgen, ["augment", str(doc), "-o", str(out), "--replicate", "0,2,5", "--repetitions", "2"])
    assert done.exit_code == 0, done.output
    url = run_folder(out, sorted(out.glob("run-*.yaml"))[8:])
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["methods"]["factors"].startswith("type II ANOVA") and body["runs"] == 14
    pairs = {tuple(i["factors"]) for i in body["interactions"]}
    assert not pairs & {("x1", "x2"), ("x1", "x3"), ("x1", "x4"), ("x1", "x5"), ("x2", "x4"), ("x3", "x5")}
    table = run_table(load_scores(url, parse_response(None), "three-way"), parse_response(None))[0]
    data = table.assign(**{n: table[n].astype(str) for n in ("x1", "x2", "x3", "x4", "x5")})
    formula = " + ".join([f"C({n})" for n in ("x1", "x2", "x3", "x4", "x5")] + [f"C({a}):C({b})" for a, b in pairs])
    fit = smf.ols(f"y ~ {formula}", data=data).fit()
    assert fit.df_model + 1 == len(fit.params)  # full rank
    anova = anova_lm(fit, typ=2)
    for row in body["factors"] + body["interactions"]:
        term = f"C({row['factors'][0]}):C({row['factors'][1]})" if "factors" in row else f"C({row['name']})"
        assert row["F"] >= 0 and row["F"] == pytest.approx(anova.loc[term, "F"], rel=1e-9)
        assert row["df"] == [1.0, fit.df_resid]


def test_a_factor_the_runs_confound_with_another_has_no_test_of_its_own(tmp_path) -> None:
    """Only the runs where ``b`` is 1 exactly when ``a`` is ``hi`` finished (the others failed or were not
    run): ``b``'s levels move with ``a``'s, so no model can tell their effects apart. The ANOVA leaves ``b``
    out (before, the rank-deficient fit gave each of two such factors a large F of its own: 6,881 and
    11,298 on a noisy two-level example); ``b``'s row has no F or p and names ``a`` as its alias, a warning says so, and ``a`` and ``c``
    have statsmodels' F of the model without ``b``."""
    import statsmodels.formula.api as smf
    import yaml
    from statsmodels.stats.anova import anova_lm

    from xdoe.analysis import load_scores, parse_response, run_table

    out = tmp_path / "out"
    generate(categorical_document(), out)
    chosen = [p for p in sorted(out.glob("run-*.yaml"))
              if (str(yaml.safe_load(p.read_text())["design_point"]["levels"]["b"]) == "1")
              == (yaml.safe_load(p.read_text())["design_point"]["levels"]["a"] == "hi")]
    assert len(chosen) == 12
    url = run_folder(out, chosen)
    result = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    factors = {f["name"]: f for f in body["factors"]}
    assert body["methods"]["factors"].startswith("type II ANOVA")
    assert factors["b"]["F"] is None and factors["b"]["p"] is None and factors["b"]["aliases"] == ["a"]
    assert any(w.startswith("b is confounded with a in these runs") for w in body["warnings"])
    table = run_table(load_scores(url, parse_response(None), "categorical"), parse_response(None))[0]
    data = table.assign(**{n: table[n].astype(str) for n in ("a", "b", "c")})
    anova = anova_lm(smf.ols("y ~ C(a) + C(c) + C(a):C(c)", data=data).fit(), typ=2)
    assert factors["a"]["p"] == 0.0  # noise-free: a's effect is certain
    assert (factors["c"]["F"], factors["c"]["p"]) == (0.0, 1.0)  # c has no effect
    assert factors["a"]["df"] == [2.0, anova.loc["Residual", "df"]]
