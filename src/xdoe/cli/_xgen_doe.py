"""xgen's DoE parts (issue 24): the dry run's resolution, aliases,
D-efficiency, largest correlation and coded/natural points, and ``xgen
augment`` (built by :func:`augment_command` with xgen's helpers, so this module
does not import :mod:`xdoe.cli._xgen`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from xdoe.cli._common import Number, handle_errors

__all__ = ["augment_command"]


def _figure(value: Any) -> str:
    if value is None:
        return "n/a"
    value = float(value)
    if value != value:
        return "n/a"
    if value == float("inf"):
        return "n/a (one point)"
    return f"{value:.4g}"


def _diagnostic_lines(console: Any, diag: dict) -> None:
    pair = f" ({diag['correlated'][0]} ~ {diag['correlated'][1]})" if diag.get("correlated") else ""
    console.print(f"{diag['model']} model, {diag['terms']} terms: D-efficiency {_figure(diag['d_efficiency'])} %, "
                  f"largest correlation between model terms {_figure(diag['max_correlation'])}{pair}", markup=False)


def _doe_lines(console: Any, design: Any) -> None:
    """Resolution, aliases up to two-factor interactions, D-efficiency, the
    largest correlation and every point coded and natural (issue 24)."""
    from rich.table import Table

    from xdoe.design import summary
    from xdoe.documents import canonical_json

    doe = summary(design)
    info, diag = doe["info"], doe["diagnostics"]
    options = ", ".join(f"{k}: {v}" for k, v in info.items() if k not in ("method", "model"))
    if options:
        console.print(f"design options: {options}", markup=False)
    if "resolution" in diag:
        res = diag["resolution"]
        roman = {3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII"}
        text = "full factorial (no defining word)" if res is None and design.method == "fractional_factorial" \
            else roman.get(res, str(res))
        console.print(f"runs: {len(design)}, resolution {text}", markup=False)
        full = [(k, v) for k, v in diag["aliases"].items() if any(isinstance(a, str) for a in v)]
        partial = {k: v for k, v in diag["aliases"].items() if all(isinstance(a, list) for a in v)}
        if full:
            console.print("aliases (up to two-factor interactions):", markup=False)
            shown: set[str] = set()
            for term, others in full:
                if term in shown:
                    continue
                chain = [a for a in others if isinstance(a, str)]
                shown.update(a.lstrip("-") for a in chain)
                console.print(f"  {term} = " + " = ".join(chain), markup=False)
            clear = [f.name for f in design.factors if f.name not in diag["aliases"]]
            if clear:
                console.print(f"  main effects {', '.join(clear)}: not aliased with any two-factor interaction",
                              markup=False)
        elif not partial:
            console.print("aliases: none up to two-factor interactions", markup=False)
        if partial:
            sizes = sorted({abs(a[1]) for v in partial.values() for a in v})
            console.print(f"partial aliases: each main effect correlated with {max(len(v) for v in partial.values())}"
                          f" two-factor interactions at |r| in {', '.join(f'{x:.3g}' for x in sizes)}", markup=False)
    _diagnostic_lines(console, diag)
    table = Table(title="points (coded | natural)", title_justify="left")
    names = [f.name for f in design.factors]
    table.add_column("point", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for i, point in enumerate(doe["points"]):
        cells = []
        for name, c in zip(names, point["coded"]):
            value = point["natural"].get(name)
            natural = value if isinstance(value, str) else canonical_json(value)
            cells.append("-" if c is None else f"{c:+.4g} | {natural}")
        table.add_row(str(i), *cells)
    console.print(table)


def _model_how(kind: str, runs: Any, target: Path, experiment: Any, response: str | None, store_url: str | None,
               options: dict[str, Any]) -> dict[str, Any]:
    """The block of ``--steepest-ascent`` / ``--confirm``: the finished
    campaign's scores read from its store as ``xrun analyze`` reads them
    (:func:`xdoe.cli._analysis.load_frame`: ``--store`` or ``$XRUN_STORE``,
    else ``OUTPUT/xrun.sqlite``, else the default store), the design from the
    manifest, the model and the points from
    :func:`xdoe.analysis._sequential.sequential_step`."""
    from xdoe.analysis import parse_response, read_design, sequential_step
    from xdoe.cli._analysis import load_frame
    from xdoe.design.runfiles import with_blocks

    uid = experiment.model.uid
    resp = parse_response(response)
    frame = load_frame(target, uid, store_url, response=resp)
    design = read_design(target, uid)
    current = with_blocks(runs, target)
    blocks = getattr(current, "blocks", None) or []
    own = len(current) - sum(int(b["runs"]) for b in blocks
                             if isinstance(b["how"], dict) and ("steepest_ascent" in b["how"] or "confirm" in b["how"]))
    return {kind: sequential_step(frame, resp, design, kind, runs=own, **options)}


def _model_lines(how: dict[str, Any]) -> list[str]:
    if "steepest_ascent" in how:
        spec = how["steepest_ascent"]
        word = "descent" if spec["goal"] == "minimize" else "ascent"
        lines = [f"path of steepest {word} (response {spec['response']}, first-order model of the design's own "
                 f"blocks): b = " + ", ".join(f"{f} {v:+.4g}" for f, v in spec["b"].items()),
                 "  direction (unit, coded): " + ", ".join(f"{f} {v:+.4g}" for f, v in spec["direction"].items())
                 + f"; step {spec['step']:g} coded units of the factor of largest |b|"]
        if spec["held"]:
            lines.append("  held at their better level (factors with levels do not move): "
                         + ", ".join(f"{f} {v:+g}" for f, v in spec["held"].items()))
        if spec["outside"]:
            lines.append(f"  steps {', '.join(map(str, spec['outside']))} leave the design's cube [-1, 1] "
                         "(recorded in the manifest)")
        return lines
    spec = how["confirm"]
    pi = spec.get("pi")
    return [f"confirmation runs at the {spec['at']} ({spec['why']}; response {spec['response']}): predicted "
            f"{spec['predicted']:.4g}" + (f", 95 % PI of a new run [{pi[0]:.4g}, {pi[1]:.4g}]" if pi else "")]


def augment_command(*, prepare: Callable[..., Any], resume_gc: Callable[[], None], warn: Callable[..., None],
                    plan_lines: Callable[..., list[str]]) -> click.Command:
    """``xgen augment`` with xgen's document loading (``prepare``), garbage
    collector switch, warning printer and extension summary."""
    _prepare, _resume_gc, _warn, _plan_lines = prepare, resume_gc, warn, plan_lines

    @click.command(short_help="Add fold-over, axial, space-filling or replicate points to a design.")
    @click.argument("file", type=click.Path(path_type=Path))
    @click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
                  help="The output folder to augment [default: the document's 'output' key].")
    @click.option("--foldover", "foldover", is_flag=False, flag_value="", default=None, metavar="[FACTOR]",
                  help="Add the mirror image of the two-level points (every sign reversed; with FACTOR, only its).")
    @click.option("--axial", is_flag=True, help="Add 2k axial points and centre points (factorial -> central composite).")
    @click.option("--alpha", type=click.Choice(["rotatable", "orthogonal", "faced"]), default="rotatable",
                  show_default=True, help="With --axial: the axial distance (orthogonal: orthogonal blocking).")
    @click.option("--center", type=click.IntRange(min=0), default=None,
                  help="With --axial: centre points of the axial block [default: as many as the design has].")
    @click.option("--add", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Add N space-filling points, each farthest from all points so far (greedy maximin).")
    @click.option("--replicate", default=None, metavar="POINTS",
                  help="Add copies of these design points (comma-separated indices), run --repetitions times.")
    @click.option("--replicate-to", "replicate_to", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Add the missing repetitions so that every design point has N runs (see xrun plan); the "
                       "new runs get the seeds of the same document with repetitions: N.")
    @click.option("--steepest-ascent", "steepest", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Add N points along the path of steepest ascent (descent with --goal minimize) of the "
                       "first-order model fitted to the finished two-level design (read from the store): "
                       "x_j = k S b_j / max|b|, k = 1..N (Montgomery 2012, 11.2). Factors with a range, or two "
                       "numeric levels listed low first, move (past them if the path goes there: recorded); "
                       "other factors with levels are held at their better level (a design with no factor that "
                       "can move is refused).")
    @click.option("--step", type=Number(min=0, min_open=True), default=1.0, show_default=True,
                  metavar="S", help="With --steepest-ascent: coded units per step of the factor of largest |b|.")
    @click.option("--confirm", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Add N confirmation runs at the predicted optimum of the finished design's model: the "
                       "stationary point if it is a maximum (minimum) inside the region, else the best predicted "
                       "design point (the manifest says which); xrun analyze then says confirmed / not confirmed.")
    @click.option("--goal", type=click.Choice(["maximize", "minimize"]), default=None,
                  help="With --steepest-ascent / --confirm: whether a larger or a smaller response is better "
                       "[default: the goal the design declared (an earlier steepest-ascent or confirmation "
                       "block's --goal), else maximize; as xrun analyze ranks the points].")
    @click.option("--response", "-r", metavar="PHASE:METRIC:STAT", default=None,
                  help="With --steepest-ascent / --confirm: the response the model is fitted to (as xrun analyze).")
    @click.option("--store", "store_url", metavar="URL", envvar="XRUN_STORE", default=None,
                  help="With --steepest-ascent / --confirm: the store of the finished campaign [default: "
                       "$XRUN_STORE, else OUTPUT/xrun.sqlite if it exists, else sqlite:///_outputs/xrun.sqlite].")
    @click.option("--repetitions", type=click.IntRange(min=1), default=None,
                  help="Runs of each new point [default: the document's repetitions].")
    @click.option("--dry-run", is_flag=True, help="Print the new points and what would be added; write nothing.")
    @click.option("--max-total-runs", type=click.IntRange(min=1), default=None, metavar="N",
                  help="Refuse more runs in all (the existing ones and the new block's) "
                       "[default: the document's max_total_runs, else 1000000].")
    @click.option("--quiet", "-q", is_flag=True, help="No summary or warnings.")
    @handle_errors
    def augment(file: Path, output: Path | None, foldover: str | None, axial: bool, alpha: str, center: int | None,
                add: int | None, replicate: str | None, replicate_to: int | None, steepest: int | None, step: float,
                confirm: int | None, goal: str | None, response: str | None, store_url: str | None,
                repetitions: int | None, dry_run: bool, max_total_runs: int | None, quiet: bool) -> None:
        """Add a block of design points to a generated design (sequential
        experimentation): --foldover [FACTOR], --axial, --add N, --replicate
        POINTS, --replicate-to N (more repetitions of every point), --steepest-ascent N
        or --confirm N (placed by the model fitted to the finished campaign's
        store; their runs stay out of that model in xrun analyze). Existing run files stay byte-identical (same mtime) and every
        result is kept; the new runs are numbered after the existing ones and get
        their own seeds. The manifest records the block, so xgen generate keeps
        it and xrun analyze adds a block factor.

        \b
        xgen augment screen.yaml --foldover          de-alias main effects
        xgen augment screen.yaml --foldover lr       de-alias lr and its interactions
        xgen augment surface.yaml --axial            factorial + centre -> central composite
        xgen augment study.yaml --add 8              8 more space-filling points
        xgen augment study.yaml --replicate 0,4 --repetitions 3
        xgen augment study.yaml --replicate-to 10    10 runs of every point
        xgen augment screen.yaml --steepest-ascent 5 --step 0.5
        xgen augment surface.yaml --confirm 4 --goal minimize
        """
        chosen = [name for name, given in (("--foldover", foldover is not None), ("--axial", axial),
                                           ("--add", add is not None), ("--replicate", replicate is not None),
                                           ("--replicate-to", replicate_to is not None),
                                           ("--steepest-ascent", steepest is not None),
                                           ("--confirm", confirm is not None)) if given]
        if len(chosen) != 1:
            raise click.UsageError("give exactly one of --foldover [FACTOR], --axial, --add N, --replicate POINTS, "
                                   "--replicate-to N, --steepest-ascent N, --confirm N"
                                   + (f" (got {', '.join(chosen)})" if chosen else ""))
        if steepest is None and step != 1.0:
            raise click.UsageError("--step S goes with --steepest-ascent N")
        if steepest is None and confirm is None:
            stray = [n for n, given in (("--goal", goal is not None), ("--response", response is not None),
                                        ) if given]
            if stray:
                raise click.UsageError(f"{', '.join(stray)} go(es) with --steepest-ascent N or --confirm N")
        experiment, design, runs = _prepare(file, strict=False)
        from xdoe.design.runfiles import recorded_overrides

        recorded = recorded_overrides(output if output is not None else Path(experiment.model.output),
                                      experiment.safe_uid)
        if recorded:  # the study as generated: the document with the overrides its manifest records
            experiment, design, runs = _prepare(file, strict=False, overrides=recorded)
            if not quiet:
                import shlex

                click.echo(f"with the overrides the manifest records: {shlex.join(recorded)}")
        _resume_gc()
        from xdoe.design.runfiles import augment_runs, check_augment, write_runs
        from xdoe.errors import InputError

        _warn(experiment.warnings, quiet)
        if foldover is not None:
            how: dict = {"foldover": foldover or None}
        elif axial:
            how = {"axial": {"alpha": alpha, "center": center}}
        elif add is not None:
            how = {"add": add}
        elif steepest is not None or confirm is not None:
            if confirm is not None and repetitions is not None:
                raise click.UsageError("--confirm N is the number of runs; give no --repetitions")
            target = output if output is not None else Path(experiment.model.output)
            kind, options = (("steepest_ascent", {"steps": steepest, "step": step, "goal": goal})
                             if steepest is not None else ("confirm", {"goal": goal}))
            check_augment(runs, {kind: None})  # before the store is read
            how = _model_how(kind, runs, target, experiment, response, store_url, options)
            if confirm is not None:
                how["repetitions"] = confirm
        elif replicate_to is not None:
            if repetitions is not None:
                raise click.UsageError("--replicate-to N sets the runs of every point; give no --repetitions")
            how = {"replicate_to": replicate_to}
        else:
            try:
                how = {"replicate": [int(p) for p in str(replicate).split(",") if p.strip()]}
            except ValueError:
                raise InputError(f"--replicate {replicate!r}: expected design point indices like 0,4,7") from None
            if not how["replicate"]:
                raise InputError(f"--replicate {replicate!r}: no design point given; expected indices like 0,4,7")
        if repetitions is not None:
            how["repetitions"] = repetitions
        target = output if output is not None else Path(experiment.model.output)
        augmented = augment_runs(runs, target, how, max_total_runs=max_total_runs)
        block = augmented.blocks[-1]
        if dry_run or not quiet:
            from xdoe.design import summary

            doe = summary(augmented.design)
            names = [f.name for f in augmented.design.factors]
            for line in _model_lines(how) if ("steepest_ascent" in how or "confirm" in how) else []:
                click.echo(line)
            if "replicate_to" in how:
                click.echo(f"block {block['block']}: the missing repetitions so that every design point has "
                           f"{block['repetitions']} runs = {block['runs']} runs (runs {block['first_run']}.."
                           f"{block['first_run'] + block['runs'] - 1}; seeds as with repetitions: {block['repetitions']})")
            else:
              click.echo(f"block {block['block']}: {block['points']} new design points x {block['repetitions']} "
                       f"repetition(s) = {block['runs']} runs (runs {block['first_run']}..{block['first_run'] + block['runs'] - 1}, "
                       f"design points {block['first_point']}..{block['first_point'] + block['points'] - 1})")
            for i in range(block["first_point"], block["first_point"] + block["points"]):
                point = doe["points"][i]
                click.echo(f"  point {i}: " + ", ".join(f"{n} inactive" if c is None else
                                                        f"{n} = {c:+.4g} ({point['natural'][n]})"
                                                        for n, c in zip(names, point["coded"])))
            diag = doe["diagnostics"]
            click.echo(f"combined design: {augmented.design.method}, {augmented.n_points} points; {diag['model']} model: "
                       f"D-efficiency {_figure(diag['d_efficiency'])} %, largest correlation "
                       f"{_figure(diag['max_correlation'])}"
                       + (f", resolution {diag['resolution']}" if diag.get("resolution") else ""))
        if dry_run:
            click.echo("dry run: nothing written")
            return
        result = write_runs(augmented, target)
        if not quiet:
            for line in _plan_lines(result.plan, result.path, dry=False):
                click.echo(line)

    return augment
