"""``python -m experiments.run_all``: the reference benchmark, resumable and reproducible.

Runs the grid (``--quick``: a small complete slice; default: the full reference grid), stores each
cell under ``<out>/cells/``, then writes ``results.csv``/``results.parquet``, ``manifest.json``,
``REPORT.md`` and ``plots/``. Rerunning the same command recomputes only unfinished or failed
cells. Exit code: 0 when every cell succeeded, 1 when any failed, 2 for a usage problem, 130
when interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, Sequence

from experiments.grid import DatasetSpec, GridSpec, expand, full_grid, quick_grid
from experiments.methods import MASKINGS, METHODS, MethodOptions, MethodSpec
from experiments.plots import make_plots
from experiments.report import collect, manifest, write_report, write_tables
from experiments.runner import machine, run

__all__ = ["build_parser", "main"]


def _names(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    return [n for v in values for n in v.split(",") if n]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.run_all", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="small complete slice: every method and protocol, few samples")
    p.add_argument("--datasets", nargs="+", metavar="NAME",
                   help="dataset names (space or comma separated), e.g. imdb62 pan14_av/en_essays")
    p.add_argument("--methods", nargs="+", metavar="NAME", help=f"from {sorted(METHODS)}")
    p.add_argument("--protocols", nargs="+", metavar="NAME", help="protocol names")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--n-jobs", type=int, default=1, help="parallel cells (default 1)")
    p.add_argument("--out", default="results", help="output folder (default results/)")
    p.add_argument("--cache-dir", default=None,
                   help="folder for method caches (LLM responses: <DIR>/llm_responses.sqlite; "
                        "default $STYLO_LLM_CACHE or ~/.cache/stylo/)")
    p.add_argument("--backend", choices=["loky", "dask"], default="loky")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="dask.distributed scheduler address; without it a LocalCluster on "
                        "127.0.0.1 is started")
    p.add_argument("--llm-base-url", default=None,
                   help="OpenAI-compatible server URL (e.g. http://127.0.0.1:8080/v1): every "
                        "language-model method asks it instead of the local model")
    p.add_argument("--llm-model", default=None, help="model name on that server")
    p.add_argument("--llm-api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the server's API key, read at call "
                        "time and never stored (default OPENAI_API_KEY; unset: no key)")
    p.add_argument("--llm-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="seconds to wait for one server response (default 120)")
    p.add_argument("--llm-max-retries", type=int, default=4, metavar="N",
                   help="retries of a failed server call before it counts as failed "
                        "(default 4)")
    p.add_argument("--max-cells", type=int, default=None,
                   help="compute at most this many pending cells, then stop (rerun continues)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return p


def _default_protocols() -> Mapping | None:
    try:
        from stylo.protocols import PROTOCOLS
    except ImportError as exc:
        print(f"run_all: stylo.protocols is not available ({exc}); no protocol to run.",
              file=sys.stderr)
        return None
    return PROTOCOLS


def _default_loader() -> Callable:
    from stylo.datasets import load
    return load


def _grid(args) -> GridSpec:
    grid = quick_grid(args.seed) if args.quick else full_grid(args.seed)
    datasets = _names(args.datasets)
    if datasets:
        grid.datasets = [DatasetSpec(n) for n in datasets]
        # datasets named by the user go to every protocol that applies to them, for every
        # method the user runs
        grid.protocol_datasets = {}
        grid.kind_scopes = {}
    grid.methods = _names(args.methods)
    grid.protocols = _names(args.protocols)
    return grid


def main(argv: Sequence[str] | None = None, *, protocols: Mapping | None = None,
         loader: Callable | None = None, methods: Mapping[str, MethodSpec] | None = None,
         maskings: Mapping[str, Callable] | None = None, grid: GridSpec | None = None) -> int:
    """Run the benchmark; ``protocols``, ``loader``, ``methods``, ``maskings`` and ``grid``
    replace the registered ones (tests use this with small stand-ins)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    started = datetime.now(timezone.utc).isoformat()
    protocols = _default_protocols() if protocols is None else protocols
    if not protocols:
        return 2
    loader = _default_loader() if loader is None else loader
    methods = METHODS if methods is None else methods
    maskings = MASKINGS if maskings is None else maskings
    if bool(args.llm_base_url) != bool(args.llm_model):
        print("run_all: --llm-base-url and --llm-model go together", file=sys.stderr)
        return 2
    options = MethodOptions(llm_base_url=args.llm_base_url, llm_model=args.llm_model,
                            llm_api_key_env=args.llm_api_key_env, llm_timeout=args.llm_timeout,
                            llm_max_retries=args.llm_max_retries, cache_dir=args.cache_dir,
                            n_jobs=1)
    if args.cache_dir:  # read where the backends are made, in the worker processes
        os.environ["STYLO_LLM_CACHE"] = str(Path(args.cache_dir) / "llm_responses.sqlite")
    if grid is None:
        grid = _grid(args)
    try:
        expansion = expand(grid, protocols, loader, options=options, methods=methods,
                           maskings=maskings)
    except ValueError as exc:
        print(f"run_all: {exc}", file=sys.stderr)
        return 2
    for line in expansion.skipped:
        print(f"skipped: {line}", file=sys.stderr)
    out = Path(args.out)
    print(f"{len(expansion.cells)} cells -> {out}/cells/", file=sys.stderr)
    try:
        summary = run(expansion.cells, out, protocols=protocols, loader=loader, methods=methods,
                      options=options, backend=args.backend, n_jobs=args.n_jobs,
                      scheduler=args.scheduler, max_cells=args.max_cells,
                      progress=not args.no_progress, maskings=maskings)
    except KeyboardInterrupt:
        print("run_all: interrupted; finished cells are stored, rerun the same command to "
              "resume", file=sys.stderr)
        return 130
    print(summary, file=sys.stderr)
    keys = {c.key for c in expansion.cells}
    table, failures = collect(out, keys=keys)
    paths = write_tables(table, out)
    plot_notes: list[str] = []
    plots = [] if args.no_plots else make_plots(out, table, keys=keys, notes=plot_notes)
    info = manifest(argv, started, datetime.now(timezone.utc).isoformat(), machine(),
                    vars(summary), expansion.skipped)
    (out / "manifest.json").write_text(json.dumps(info, indent=1, default=str),
                                       encoding="utf-8")
    report = write_report(out, table, failures, info, plots=plots, plot_notes=plot_notes)
    print(f"wrote {', '.join(str(p) for p in [*paths, out / 'manifest.json', report])} and "
          f"{len(plots)} plot(s)", file=sys.stderr)
    if len(failures):
        print(f"run_all: {len(failures)} cell(s) failed; see {report}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
