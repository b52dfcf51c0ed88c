"""PAN-compatible command line for every registered method.

    python -m baselines METHOD -i INPUT_DIR -o OUTPUT_DIR [--train TRAIN_DIR] [--seed N]
        [--max-train N|all] [--max-train-chars N|all]
    python -m baselines --list

INPUT_DIR and TRAIN_DIR are in the official PAN20/21 layout (``pairs.jsonl``, and
``truth.jsonl`` for training); OUTPUT_DIR receives ``answers.jsonl`` (``{"id", "value"}``) in
the order of ``pairs.jsonl``. When INPUT_DIR also holds ``truth.jsonl``, the PAN 2021 metrics
are printed to stderr. A method fits on at most ``--max-train`` training pairs holding at
most ``--max-train-chars`` characters (defaults 8,000 and 20 million, drawn with the seed in the
labels' shares, as the PAN protocols do; ``all`` for no cap): PAN 2020/21's training sets hold
tens of thousands of long pairs, and fitting on all of them costs ``ensemble`` tens of
gigabytes (General Impostors did not finish 10,000 in 15 minutes), for a held-out AUC that,
but for ``logreg-pair``'s, stops moving by 500 pairs (benchmarks/README.md, "Training
budgets"); stderr says when pairs were left out.

Exit code: 0 when the answers are written; 2 for a usage problem (unknown method, a method
whose optional extra is not installed, unreadable input, an OUTPUT_DIR that cannot be created
or written, checked before any fitting), with one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time

from baselines.pan_io import write_answers
from baselines.registry import DEFAULT_OPTIONS, METHODS, kind, make, methods, unavailable
from stylo._cli import OneLineParser, output_folder_problem
from stylo.datasets import DataError, load_pan20_format
from stylo.protocols.base import MAX_TRAIN_CHARS, MAX_TRAIN_PROBLEMS, capped_pairs


def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m baselines", description=__doc__.split("\n")[0], name="baselines"
    )
    ap.add_argument("method", nargs="?", help="a registered method (see --list)")
    ap.add_argument("-i", "--input", help="folder with pairs.jsonl to answer")
    ap.add_argument("-o", "--output", help="folder to write answers.jsonl into")
    ap.add_argument("--train", help="folder with training pairs.jsonl and truth.jsonl")
    ap.add_argument("--seed", type=int, default=None, help="random_state of the method")
    for flag, least, default, what in (
        ("--max-train", 2, MAX_TRAIN_PROBLEMS, "training pairs fitted on at most"),
        ("--max-train-chars", 1, MAX_TRAIN_CHARS, "characters of those pairs' texts at most"),
    ):
        ap.add_argument(
            flag,
            type=_cap(least),
            default=default,
            metavar="N|all",
            help=f"{what} (default {default}; all: no cap)",
        )
    ap.add_argument("--list", action="store_true", help="list the registered methods and exit")
    return ap


def _cap(least: int):
    """The argument type of a training cap: an int >= ``least``, or ``all`` (None: no cap)."""

    def parse(value: str) -> int | None:
        if value.strip().lower() == "all":
            return None
        try:
            n = int(value)
        except ValueError:
            n = None
        if n is None or n < least:
            raise argparse.ArgumentTypeError(f"expected an int >= {least} or 'all', got {value!r}")
        return n

    return parse


def _method_list(width: int = 100) -> str:
    """The registered methods as left-aligned columns method, kind, description, the
    description wrapped so that no line is longer than ``width``."""
    names = methods()
    w_name = max(len("method"), *map(len, names))
    w_kind = max(len("kind"), *(len(METHODS[n].kind) for n in names))
    indent = " " * (w_name + w_kind + 4)
    lines = [f"{'method':<{w_name}}  {'kind':<{w_kind}}  description"]
    for name in names:
        spec = METHODS[name]
        lines.append(
            textwrap.fill(
                spec.description,
                width,
                subsequent_indent=indent,
                initial_indent=f"{name:<{w_name}}  {spec.kind:<{w_kind}}  ",
            )
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.list:
        print(_method_list())
        return 0
    if not args.method or not args.input or not args.output:
        ap.error("METHOD, -i INPUT_DIR and -o OUTPUT_DIR are required (or --list)")
    if args.method not in methods():
        ap.error(f"unknown method {args.method!r}; choose from {', '.join(methods())}")
    if kind(args.method) == "attribution":
        ap.error(
            f"method {args.method!r} attributes texts among candidate authors and has no "
            f"answer for a verification pair; run it on cross-domain attribution: "
            f"python -m experiments.run_all --protocols cdaa_attribution"
        )
    why = unavailable(METHODS[args.method], DEFAULT_OPTIONS)
    if why:
        ap.error(f"method {args.method!r} {why}")
    problem = output_folder_problem(args.output)
    if problem:
        ap.error(f"-o {args.output} {problem}")
    try:
        test = load_pan20_format(args.input)
        train = load_pan20_format(args.train) if args.train else None
    except DataError as err:
        ap.error(str(err))
    est = make(args.method, seed=args.seed)
    if train is None and est.requires_fit:
        ap.error(f"method {args.method!r} needs training data: --train TRAIN_DIR")
    if train is not None and not train.labelled:
        ap.error(f"{args.train}: training pairs need a truth.jsonl")
    available = len(train) if train is not None else 0
    seed = 0 if args.seed is None else args.seed
    train = capped_pairs(train, args.max_train, seed, args.max_train_chars)
    if train is not None and len(train) < available:
        print(
            f"{args.method}: fitting on {len(train)} of {available} training pairs "
            f"(--max-train {args.max_train}, --max-train-chars {args.max_train_chars}; "
            f"'all' lifts a cap)",
            file=sys.stderr,
        )
    t0 = time.perf_counter()
    try:
        est.fit(train)
    except ValueError as err:  # training data the method cannot learn from, e.g. one class
        ap.error(f"--train {args.train}: {args.method} cannot be fitted on these pairs: {err}")
    t1 = time.perf_counter()
    scores = est.score_problems(test)
    t2 = time.perf_counter()
    path = write_answers(test.ids, scores, args.output)
    print(
        f"{args.method}: fit {t1 - t0:.2f} s, {len(test)} problems scored in {t2 - t1:.2f} s "
        f"-> {path}",
        file=sys.stderr,
    )
    if test.labelled:
        from stylo.metrics.pan import evaluate_all

        res = evaluate_all(test.labels, scores, version="pan21")
        print(" ".join(f"{k}={v:.3f}" for k, v in res.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
