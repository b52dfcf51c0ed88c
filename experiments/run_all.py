"""``python -m experiments.run_all``: the reference benchmark, resumable and reproducible.

Runs the grid (``--quick``: a small complete slice; default: the full reference grid), stores each
cell under ``<out>/cells/``, then writes ``results.csv``/``results.parquet``, ``manifest.json``,
``REPORT.md`` and ``plots/``. Rerunning the same command recomputes only unfinished or failed
cells.

Exit codes:
  0    every cell of the grid succeeded (corpora of the default grid that are not on this
       machine are left out, each on a "skipped:" line) or does not apply: a method that
       must be fitted, on a task that leaves no training data (a small corpus of one's own),
       is listed in REPORT.md's "Cells that do not apply", not run
  1    some cells failed: the tables, manifest.json and REPORT.md (which lists the failures)
       are written, and rerunning the same command retries the failed cells only; or no cell
       applies
  2    a usage problem, told in one line on stderr; nothing is computed: a bad option value
       (--n-jobs 0 or below -1, a negative --max-cells or --seed, --scheduler without
       --backend dask, --backend dask without dask.distributed installed, an --out that is a
       file or cannot be written), an unknown method or protocol, or a name given to
       --datasets, --methods or --protocols that is in no cell (a dataset that cannot be
       loaded, a method that cannot run with the options given, a protocol that applies to
       none of the datasets)
  3    the grid has no cells (e.g. none of its corpora is on this machine): nothing to run
  130  interrupted: finished cells are stored, rerunning the same command resumes
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from baselines.registry import METHODS, MethodOptions, MethodSpec
from experiments.grid import DatasetSpec, GridSpec, expand, full_grid, quick_grid
from experiments.methods import MASKINGS
from experiments.plots import make_plots
from experiments.report import (
    collect,
    manifest,
    split_failures,
    summarise,
    write_report,
    write_tables,
)
from experiments.runner import dask_distributed, machine, release_loky_workers, run
from experiments.suite import Suite
from stylo._cli import OneLineParser, output_folder_problem
from stylo.features._validation import effective_n_jobs

__all__ = ["build_parser", "main"]


def _names(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    return [n for v in values for n in v.split(",") if n]


def _jobs(text: str) -> int:
    """An argparse type: a worker count, ``-1`` for one per core."""
    value = int(text)  # a ValueError reads "invalid int value: 'TEXT'"
    if value == -1:
        return effective_n_jobs(-1)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, or -1 for every core, got {value}")
    return value


_jobs.__name__ = "int"


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer not below ``minimum``."""

    def parse(text: str) -> int:
        value = int(text)  # a ValueError reads "invalid int value: 'TEXT'"
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "int"
    return parse


def _registered_protocols() -> tuple[Mapping, str]:
    """The protocol registry, and what to say when it is empty."""
    try:
        from stylo.protocols import PROTOCOLS
    except ImportError as exc:
        return {}, f"stylo.protocols cannot be imported ({exc})"
    return PROTOCOLS, "stylo.protocols registers none"


def _dataset_names() -> str:
    """The loadable registered datasets, with their sub-corpora, for ``--help``."""
    from stylo.datasets import registry

    try:
        entries = registry()
    except OSError as exc:
        return f"none: the dataset registry cannot be read ({exc})"
    names = []
    for name, entry in sorted(entries.items()):
        if entry["kind"] not in ("texts", "pairs"):  # metric fixtures, not loadable corpora
            continue
        subs = entry.get("subsets")
        names.append(
            f"{name} (or one corpus: {', '.join(f'{name}/{s}' for s in subs)})" if subs else name
        )
    return ", ".join(names)


def build_parser(protocols: Mapping | None = None) -> argparse.ArgumentParser:
    """The command line; its help lists ``protocols`` (default: the registered ones) and the
    registered datasets."""
    why = "none was given"
    if protocols is None:
        protocols, why = _registered_protocols()
    epilog = "\n\n".join(
        textwrap.fill(text, width=99, subsequent_indent="  ")
        for text in [
            f"protocols: {', '.join(sorted(protocols)) or 'none: ' + why}",
            f"datasets: {_dataset_names()}",
        ]
    )
    p = OneLineParser(
        prog="python -m experiments.run_all",
        description=__doc__,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        name="run_all",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small complete slice: every method and protocol, few samples",
    )
    p.add_argument(
        "--datasets",
        nargs="+",
        metavar="NAME",
        help="dataset names (space or comma separated), e.g. imdb62 pan14_av/en_essays, or "
        "the folder of a corpus of your own (holding texts.jsonl[.gz])",
    )
    p.add_argument("--methods", nargs="+", metavar="NAME", help=f"from {sorted(METHODS)}")
    p.add_argument("--protocols", nargs="+", metavar="NAME", help="protocol names (see below)")
    p.add_argument("--seed", type=_at_least(0), default=0, help="base seed (default 0)")
    p.add_argument(
        "--n-jobs",
        type=_jobs,
        default=1,
        help="parallel cells (default 1; -1: one per core)",
    )
    p.add_argument("--out", default="results", help="output folder (default results/)")
    p.add_argument(
        "--cache-dir",
        default=None,
        help="folder for method caches (LLM responses: <DIR>/llm_responses.sqlite; "
        "default $STYLO_LLM_CACHE or ~/.cache/stylo/)",
    )
    p.add_argument("--backend", choices=["loky", "dask"], default="loky")
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="dask.distributed scheduler address (with --backend dask); without it "
        "a LocalCluster on 127.0.0.1 is started",
    )
    p.add_argument(
        "--llm-base-url",
        default=None,
        help="OpenAI-compatible server URL (e.g. http://127.0.0.1:8080/v1): every "
        "language-model method asks it instead of the local model",
    )
    p.add_argument("--llm-model", default=None, help="model name on that server")
    p.add_argument(
        "--llm-api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the server's API key, read at call "
        "time and never stored (default OPENAI_API_KEY; unset: no key)",
    )
    p.add_argument(
        "--llm-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="seconds to wait for one server response (default 120)",
    )
    p.add_argument(
        "--llm-max-retries",
        type=_at_least(0),
        default=4,
        metavar="N",
        help="retries of a failed server call before it counts as failed (default 4)",
    )
    p.add_argument(
        "--max-cells",
        type=_at_least(0),
        default=None,
        help="compute at most this many pending cells, then stop (rerun continues)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return p


def _default_loader() -> Callable:
    from stylo.datasets import load

    return load


def _grid(args, methods: Mapping[str, MethodSpec]) -> GridSpec:
    grid = quick_grid(args.seed) if args.quick else full_grid(args.seed, not args.llm_base_url)
    # the registered grid's method settings, for the methods this run has (tests run stand-ins)
    grid.method_params = {m: p for m, p in grid.method_params.items() if m in methods}
    datasets = _names(args.datasets)
    if datasets:
        grid.datasets = [DatasetSpec(n) for n in datasets]
        # datasets named by the user (registered, or a corpus folder of their own) go to every
        # protocol that applies to them; a method whose kind the grid scopes (attribution-only,
        # embedding, LLM, neural) to its scope's protocols, with the scope's seeds and sizes:
        # attribution-only methods cannot score elsewhere, and a quick run's 40 one-to-two
        # triplets took the local LLM 285 s a cell on a corpus of one's own (2 in its scope)
        grid.protocol_datasets = {}
        grid.kind_scopes = {m: scope.on(datasets) for m, scope in grid.kind_scopes.items()}
    grid.methods = _names(args.methods)
    grid.protocols = _names(args.protocols)
    return grid


def _check_options(parser: OneLineParser, args) -> None:
    """Option problems found before any work; each ends the run with one line, exit 2."""
    if args.scheduler and args.backend != "dask":
        parser.error("--scheduler needs --backend dask (loky runs the cells on this machine)")
    if args.backend == "dask":
        try:
            dask_distributed()
        except RuntimeError as exc:
            parser.error(str(exc))
    problem = output_folder_problem(args.out)
    if problem:
        parser.error(f"--out {args.out} {problem}")


def _not_in_grid(args, expansion) -> list[str]:
    """One line for each name given to --datasets, --methods or --protocols that is in no
    cell, saying why."""
    lines = []
    for flag, kind in [
        ("--datasets", "dataset"),
        ("--methods", "method"),
        ("--protocols", "protocol"),
    ]:
        used = {getattr(c, kind) for c in expansion.cells}
        for name in _names(getattr(args, flag[2:])) or []:
            if name not in used:
                why = expansion.unavailable.get(
                    f"{kind} {name}",
                    "in no cell: it combines with none of the chosen "
                    "datasets, protocols and methods",
                )
                lines.append(f"{flag} {name}: {why}")
    return lines


def main(
    argv: Sequence[str] | None = None,
    *,
    protocols: Mapping | None = None,
    loader: Callable | None = None,
    methods: Mapping[str, MethodSpec] | None = None,
    maskings: Mapping[str, Callable] | None = None,
    grid: GridSpec | None = None,
) -> int:
    """Run the benchmark and return the exit code (see the module docstring); a usage problem
    raises SystemExit(2) after its line. ``protocols``, ``loader``, ``methods``, ``maskings``
    and ``grid`` replace the registered ones (tests use this with small stand-ins)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(protocols)
    args = parser.parse_args(argv)
    _check_options(parser, args)
    started = datetime.now(timezone.utc).isoformat()
    why = "none was given"
    if protocols is None:
        protocols, why = _registered_protocols()
    if not protocols:
        parser.error(f"no protocol to run: {why}")
    if bool(args.llm_base_url) != bool(args.llm_model):
        print("run_all: --llm-base-url and --llm-model go together", file=sys.stderr)
        return 2
    options = MethodOptions(
        llm_base_url=args.llm_base_url,
        llm_model=args.llm_model,
        llm_api_key_env=args.llm_api_key_env,
        llm_timeout=args.llm_timeout,
        llm_max_retries=args.llm_max_retries,
    )
    suite = Suite(
        protocols,
        _default_loader() if loader is None else loader,
        METHODS if methods is None else methods,
        MASKINGS if maskings is None else maskings,
        options,
    )
    if args.cache_dir:  # read where the backends are made, in the worker processes
        os.environ["STYLO_LLM_CACHE"] = str(Path(args.cache_dir) / "llm_responses.sqlite")
    if grid is None:
        grid = _grid(args, suite.methods)
    try:
        expansion = expand(grid, suite)
    except ValueError as exc:
        parser.error(str(exc))
    problems = _not_in_grid(args, expansion)
    if problems:
        parser.exit(2, "".join(f"run_all: {line}\n" for line in problems))
    for line in expansion.skipped:
        print(f"skipped: {line}", file=sys.stderr)
    if not expansion.cells:
        print("run_all: the grid has no cells, nothing to run", file=sys.stderr)
        return 3
    out = Path(args.out)
    print(f"{len(expansion.cells)} cells -> {out}/cells/", file=sys.stderr)
    try:
        summary = run(
            expansion.cells,
            out,
            suite,
            backend=args.backend,
            n_jobs=args.n_jobs,
            scheduler=args.scheduler,
            max_cells=args.max_cells,
            progress=not args.no_progress,
        )
    except KeyboardInterrupt:
        print(
            "run_all: interrupted; finished cells are stored, rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    print(summary, file=sys.stderr)
    keys = {c.key for c in expansion.cells}
    table, failures = collect(out, keys=keys)
    paths = write_tables(table, out)
    table_summary = summarise(table)
    plot_notes: list[str] = []
    # the plots are drawn by the grid's loky workers when there are several; then they go
    plots = []
    if not args.no_plots:
        plot_jobs = args.n_jobs if args.backend == "loky" else 1
        plots = make_plots(out, table, table_summary, keys=keys, notes=plot_notes, n_jobs=plot_jobs)
    if args.backend == "loky":
        release_loky_workers()
    info = manifest(
        argv,
        started,
        datetime.now(timezone.utc).isoformat(),
        machine(),
        vars(summary),
        expansion.skipped,
    )
    (out / "manifest.json").write_text(json.dumps(info, indent=1, default=str), encoding="utf-8")
    report = write_report(
        out, table, table_summary, failures, info, plots=plots, plot_notes=plot_notes
    )
    print(
        f"wrote {', '.join(str(p) for p in [*paths, out / 'manifest.json', report])} and "
        f"{len(plots)} plot(s)",
        file=sys.stderr,
    )
    failed, inapplicable = split_failures(failures)
    if len(failed):
        print(f"run_all: {len(failed)} cell(s) failed; see {report}", file=sys.stderr)
        return 1
    if table.empty and len(inapplicable):
        print(
            f"run_all: none of the {len(inapplicable)} cell(s) applies (their methods must be "
            f"fitted and the tasks leave no training data); see {report}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
