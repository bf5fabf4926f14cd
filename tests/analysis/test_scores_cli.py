"""``xrun results``, ``analyze`` and ``report`` read the runs' scores from
the database (issue 26): what they print and write is what the episode
table gives (:func:`xdoe.results.load` + pandas)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from xdoe.analysis import Response, analyze, load_scores, parse_response, render, write_report
from xdoe.cli._xrun import main
from xdoe.results import load


def _analyses(url: str, response: Response, fmt: str = "json") -> tuple[str, str]:
    return (render(analyze(load(url), response, seed=1), fmt),
            render(analyze(load_scores(url, response), response, seed=1), fmt))


def _digits(text: str) -> str:
    """Numbers to 12 significant digits: the database sums in its own order
    (a last-bit difference from pandas' summation; no printed table shows it)."""
    return re.sub(r"-?\d+\.\d+(e-?\d+)?", lambda m: f"{float(m[0]):.12g}", text)


def test_analyze_json_from_scores_equals_episode_table(campaign) -> None:
    for text in (None, ":objective>0.5", "0:reward:median", ":steps:iqm", ":objective:last"):
        response = parse_response(text)
        episodes, scores = _analyses(campaign["store"], response)
        assert _digits(episodes) == _digits(scores), text
        assert _analyses(campaign["store"], response, "table") == _analyses(campaign["store"], response, "table")[::-1]


def test_cli_prints_what_the_episode_table_gives(campaign) -> None:
    for fmt in ("markdown", "csv"):
        result = CliRunner().invoke(main, ["analyze", str(campaign["dir"]), "--format", fmt, "-r", ":objective>0.5",
                                           "--seed", "1"])
        assert result.exit_code == 0, result.output
        episodes, _ = _analyses(campaign["store"], parse_response(":objective>0.5"), fmt)
        assert episodes.strip() in result.output, fmt


def test_report_with_scores_is_the_report_without(campaign, tmp_path: Path) -> None:
    frame = load(campaign["store"])
    response = Response()

    def text(path: Path) -> str:
        html = path.read_text("utf-8")
        return re.sub(r"written \d{4}-\d\d-\d\d \d\d:\d\d UTC", "", html)

    a = write_report(frame, tmp_path / "a.html", response=response, output_dir=campaign["dir"],
                     store_url=campaign["store"])
    b = write_report(frame, tmp_path / "b.html", response=response, output_dir=campaign["dir"],
                     store_url=campaign["store"], scores=load_scores(campaign["store"], response))
    assert text(a) == text(b)


def test_the_report_draws_the_lay_down_of_the_first_run_of_the_design(campaign, tmp_path: Path) -> None:
    from xdoe.store import Store

    with Store(campaign["store"], read_only=True) as store:
        first = min(store.runs.versions(), key=lambda r: (r.design_point, r.repetition, r.uid))
    path = write_report(load(campaign["store"]), tmp_path / "r.html", response=Response(),
                        output_dir=campaign["dir"], store_url=campaign["store"])
    html = path.read_text("utf-8")
    assert html.count("<figcaption>Lay-down of run ") == 1
    assert f"<figcaption>Lay-down of run {first.uid}</figcaption>" in html
