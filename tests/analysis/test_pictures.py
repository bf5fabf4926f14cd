"""Pictures and the report of the synthetic campaign: valid PNGs of the
expected size, SVGs, a self-contained report with every section."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    assert len(data) > 5_000, f"{path} is suspiciously small"
    return struct.unpack(">II", data[16:24])


def test_curves_and_effects(campaign, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(xrun, ["plot", "curves", str(campaign["dir"]), "-o", str(tmp_path / "c.png")])
    assert out.exit_code == 0, out.output
    # 8 design points, one test phase (no panel beside): the legend below in 4 rows of 2
    assert png_size(tmp_path / "c.png") == (900, 592)
    out = runner.invoke(xrun, ["plot", "curves", str(campaign["dir"]), "--by", "strong", "-o", str(tmp_path / "c.svg")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")
    out = runner.invoke(xrun, ["plot", "effects", str(campaign["dir"]), "-o", str(tmp_path / "e.png")])
    assert out.exit_code == 0, out.output
    # three factors + the interaction panel: 2 rows of 3 panels
    assert png_size(tmp_path / "e.png") == (1300, 780)
    out = runner.invoke(xrun, ["plot", "curves", str(campaign["dir"]), "--by", "nope", "-o", str(tmp_path / "x.png")])
    assert out.exit_code == 2 and "no factor 'nope'" in out.output
    out = runner.invoke(xrun, ["plot", "effects", str(campaign["dir"]), "-o", str(tmp_path / "e.gif")])
    assert out.exit_code == 2 and "use .png or .svg" in out.output


def test_the_effects_picture_names_the_model_of_its_p_values(campaign, tmp_path: Path, monkeypatch) -> None:
    """The panels print p and partial eta²: the figure's title names the model they come from."""
    import xdoe.analysis.plots as plots
    from xdoe.analysis import analyze
    from xdoe.results import load

    titles = []
    monkeypatch.setattr(plots, "save", lambda fig, output: titles.append(fig._suptitle.get_text()) or Path(output))
    frame = load(campaign["store"], "synthetic")
    plots.plot_effects(analyze(frame), frame, tmp_path / "e.png")
    (title,) = titles
    assert title.splitlines()[0].startswith("synthetic · response ")
    assert title.splitlines()[-1] == "p from two-level screening"  # a 2^3 design: the screening model's p


def test_laydown_written_per_instance_and_on_request(campaign, tmp_path: Path) -> None:
    svgs = sorted((campaign["dir"] / "results").glob("*/*/laydown.svg"))
    assert len(svgs) == len(campaign["runs"])
    text = svgs[3].read_text()
    assert "agent random" in text and "environment f" in text and "sensors" in text
    # drawn once per run structure into the results root's cache, hard-linked into each folder
    drawn = sorted((campaign["dir"] / "results" / ".laydown").glob("*.svg"))
    assert 1 <= len(drawn) < len(svgs)
    assert all(any(svg.samefile(d) for d in drawn) for svg in svgs)
    out = CliRunner().invoke(xrun, ["plot", "laydown", str(campaign["runs"][0]), "-o", str(tmp_path / "l.png")])
    assert out.exit_code == 0, out.output
    width, height = png_size(tmp_path / "l.png")
    assert width == 1000 and height > 200


def test_design_plot(tmp_path: Path) -> None:
    doc = tmp_path / "exp.yaml"
    doc.write_text(Path(__file__).resolve().parents[2].joinpath("experiments", "taxi.yaml").read_text())
    out = CliRunner().invoke(xgen, ["plot", "design", str(doc), "-o", str(tmp_path / "d.png")])
    assert out.exit_code == 0, out.output
    assert png_size(tmp_path / "d.png") == (600, 600)


def test_report_has_every_section_and_is_self_contained(campaign, tmp_path: Path) -> None:
    from xdoe.analysis._report import SECTIONS

    target = tmp_path / "report.html"
    out = CliRunner().invoke(xrun, ["report", str(campaign["dir"]), "-o", str(target)])
    assert out.exit_code == 0, out.output
    text = target.read_text()
    for section in SECTIONS:
        assert f'id="{section}"' in text
    assert "http://" not in text and "https://" not in text  # nothing fetched from the network
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(images) >= 3  # curves, effects, lay-down (the document is not beside this campaign)
    assert all(base64.b64decode(i)[:4] == b"\x89PNG" for i in images)
    assert "strong" in text and "P(best &gt; point)" in text
    # an existing file, its own report or not, is replaced only with --overwrite
    mine = tmp_path / "notes.html"
    mine.write_text("<html>my notes</html>")
    for path in (target, mine):
        before = path.read_bytes()
        out = CliRunner().invoke(xrun, ["report", str(campaign["dir"]), "-o", str(path)])
        assert out.exit_code == 2 and "not overwritten (pass --overwrite" in out.output
        assert path.read_bytes() == before
    out = CliRunner().invoke(xrun, ["report", str(campaign["dir"]), "-o", str(mine), "--overwrite"])
    assert out.exit_code == 0, out.output
    assert "P(best &gt; point)" in mine.read_text() and sorted(tmp_path.iterdir()) == [mine, target]


@pytest.mark.parametrize("command", [["results"], ["analyze"], ["plot", "curves"], ["report"]])
def test_help_is_clean(command: list[str]) -> None:
    out = CliRunner().invoke(xrun, [*command, "--help"])
    assert out.exit_code == 0 and "``" not in out.output


def test_effects_ticks_read_as_short_numbers(tmp_path: Path) -> None:
    """A central composite design's axial levels (3 - 2 sqrt 2 = 0.1716...) were
    written with twelve digits under the main effects, overlapping their neighbours."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from doe_truth import run_folder, surface_document

    from xdoe.design.runfiles import generate

    out = tmp_path / "out"
    generate(surface_document(), out)
    run_folder(out)
    done = CliRunner().invoke(xrun, ["plot", "effects", str(out), "-o", str(tmp_path / "e.svg")])
    assert done.exit_code == 0, done.output
    svg = (tmp_path / "e.svg").read_text()
    ticks = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert {"4.172", "0.1716", "5.828", "9.828", "3"} <= set(ticks), ticks
    assert not any(len(t) > 8 and t.replace(".", "").isdigit() for t in ticks), ticks
