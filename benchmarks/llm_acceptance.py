"""Acceptance measurements for the LLM, embedding and RAG methods (issue 5).

Every problem comes from :mod:`stylo.protocols` (seeded; the same command gives the same
problems) and every method from :mod:`baselines.registry`; the metrics are the protocols' own
tables. Each run prints the metric table and its cost: model calls (and how many the response
cache answered), prompt/completion tokens, model seconds and wall seconds, per cell and per
item (triplet, query or pair).

    python -m benchmarks.llm_acceptance embed  --n-authors 2 5 --seeds 0 1 2
    python -m benchmarks.llm_acceptance choose --methods llm-prompt llm-prompt-both-orders
    python -m benchmarks.llm_acceptance choose --methods llm-likelihood --triplets 50
    python -m benchmarks.llm_acceptance rank   --n-authors 5 --methods llm-prompt embedding \\
        rag-embedding-llm
    python -m benchmarks.llm_acceptance verify --methods llm-likelihood --train-pairs 40 \\
        --test-pairs 60 --max-text-tokens 128

- ``choose``: AIDBench one-to-two on imdb62 (``OneToTwo(n_triplets)``, seed 0; the first
  ``k`` triplets of a seed are the same for any ``n_triplets >= k``). Besides accuracy it
  reports how the language model answered: the share of parsed answers naming the first
  slot, against the share of triplets whose true candidate is in the first slot.
- ``embed`` / ``rank``: AIDBench one-to-many on mlpapers (first authors, 10 texts per author,
  ``--groups`` 10 x ``--repeats`` 3 = 30 queries per seed; ``--groups g --repeats 1`` gives
  the first ``g`` queries of a seed's default task).
- ``verify``: PAN train -> test on pan15_av_en; ``--train-pairs`` < 100 or ``--test-pairs``
  < 500 fit on / score a balanced, seeded subset of the split (said so in the output).

Model answers are cached (``$STYLO_LLM_CACHE``, default ``~/.cache/stylo/llm_responses.sqlite``),
so a rerun costs lookups only; the ``cached`` count says how much of a run was replayed.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from baselines import registry
from stylo.datasets import load
from stylo.protocols import OneToMany, OneToTwo, PanVerification

pd.set_option("display.width", 160)


def _calls_so_far() -> int:
    from stylo.llm import default_backend

    return len(default_backend().calls)


def _cost(since: int, seconds: float, n_items: int) -> dict:
    """Cost of the default backend's calls made after the first ``since``."""
    from stylo.llm import default_backend

    calls = default_backend().calls_frame().iloc[since:]
    fresh = calls.loc[~calls["cached"].astype(bool)]
    return {
        "calls": len(calls),
        "cached": int(calls["cached"].sum()),
        "over_window": int((calls["status"] == "over_window").sum()),
        "prompt_tokens": int(calls["prompt_tokens"].sum()),
        "completion_tokens": int(calls["completion_tokens"].sum()),
        "model_s": round(float(fresh["seconds"].sum()), 1),
        # what the calls cost when they were made (a cached call keeps its first time)
        "model_s_first_run": round(float(calls["seconds"].sum()), 1),
        "wall_s": round(seconds, 1),
        "items": n_items,
        "wall_s_per_item": round(seconds / max(n_items, 1), 2),
    }


def _evaluate(protocol, name: str, task, n_items: int, **params) -> tuple[pd.DataFrame, dict]:
    method = registry.make(name, seed=task.seed).set_params(**params)
    since = _calls_so_far()
    start = time.perf_counter()
    table = protocol.evaluate(method, task)
    cost = _cost(since, time.perf_counter() - start, n_items)
    return table, cost


def _print(label: str, table: pd.DataFrame, cost: dict, metrics=None) -> None:
    rows = table[table["group"] == "all"]
    if metrics is not None:
        rows = rows[rows["metric"].isin(metrics)]
    values = ", ".join(f"{m}={v:.4f}" for m, v in zip(rows["metric"], rows["value"], strict=True))
    print(f"{label}: {values}")
    print(f"  cost: {', '.join(f'{k}={v}' for k, v in cost.items())}", flush=True)


def _position_bias(name: str, task) -> str:
    """How a prompted model answered the task's triplets (replayed from the response cache)."""
    method = registry.make(name).fit()
    frame = task.test.frame
    for q, a, b in zip(frame["query"], frame["a"], frame["b"], strict=True):
        method.choose(q, a, b)
    ans = method.answers_frame()
    ok = ans["status"] == "ok"
    first = float((ans.loc[ok, "answer"] == 0).mean()) if ok.any() else float("nan")
    return (
        f"  answers: {len(ans)} model answers, parsed {ok.mean():.3f} "
        f"({', '.join(f'{k}={v}' for k, v in ans['status'].value_counts().items())}); "
        f"of the parsed, slot 1 (first candidate) {first:.3f}; true candidate in slot 1 "
        f"in {float((frame['answer'] == 0).mean()):.3f} of the triplets"
    )


def _likelihood_params(args, train_pairs: bool) -> dict:
    out = {"max_text_tokens": args.max_text_tokens}
    if train_pairs:
        out["n_train_pairs"] = args.train_pairs
    return out


def cmd_choose(args) -> None:
    data = load("imdb62")
    protocol = OneToTwo(n_triplets=args.triplets)
    task = protocol.sample(data, protocol.settings(data)[0], seed=args.seed)
    for name in args.methods:
        params = _likelihood_params(args, train_pairs=True) if name == "llm-likelihood" else {}
        table, cost = _evaluate(protocol, name, task, len(task.test), **params)
        _print(
            f"one-to-two imdb62 {len(task.test)} triplets seed {args.seed}, {name}"
            f"{f' {params}' if params else ''} (train: {task.info.get('train_policy')})",
            table,
            cost,
        )
        if name.startswith("llm-prompt"):
            print(_position_bias(name, task), flush=True)


def _one_to_many(args, names) -> None:
    data = load("mlpapers")
    protocol = OneToMany(n_groups=args.groups, n_repeats=args.repeats)
    for n in args.n_authors:
        for seed in args.seeds:
            task = protocol.sample(data, {"n_authors": n}, seed=seed)
            for name in names:
                table, cost = _evaluate(protocol, name, task, len(task.test))
                _print(
                    f"one-to-many mlpapers {n} authors seed {seed} "
                    f"({len(task.test)} queries, {task.info['n_candidates']} candidates), "
                    f"{name}",
                    table,
                    cost,
                    ["rank@1", "rank@3", "rank@5", "mrr"],
                )


def cmd_embed(args) -> None:
    _one_to_many(args, ["embedding"])


def cmd_rank(args) -> None:
    _one_to_many(args, args.methods)


def _balanced_subset(pairs, n: int, seed: int):
    """A seeded subset of ``n`` problems, half same-author (``pairs`` itself if n >= its size)."""
    if n >= len(pairs):
        return pairs, ""
    rng = np.random.default_rng(seed)
    lab = pairs.labels
    k = n // 2
    pick = np.sort(
        np.r_[
            rng.choice(np.flatnonzero(lab), k, replace=False),
            rng.choice(np.flatnonzero(~lab), n - k, replace=False),
        ]
    )
    return pairs.subset(pick), f" (balanced subset, seed {seed})"


def cmd_verify(args) -> None:
    pairs = load("pan15_av_en")
    protocol = PanVerification()
    task = protocol.sample(pairs, protocol.settings(pairs)[0], seed=args.seed)
    task.train, train_note = _balanced_subset(task.train, args.train_pairs, args.seed)
    task.test, test_note = _balanced_subset(task.test, args.test_pairs, args.seed)
    for name in args.methods:
        params = _likelihood_params(args, train_pairs=False) if name == "llm-likelihood" else {}
        table, cost = _evaluate(protocol, name, task, len(task.train) + len(task.test), **params)
        _print(
            f"pan15_av_en train {len(task.train)}{train_note} -> test {len(task.test)}"
            f"{test_note}, {name}{f' {params}' if params else ''}",
            table,
            cost,
            ["auc", "c@1", "F1", "f_05_u", "brier", "overall", "auc*c@1"],
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    defaults = {
        "choose": ["llm-prompt", "llm-prompt-both-orders"],
        "rank": ["llm-prompt", "embedding", "rag-embedding-llm"],
        "verify": ["llm-likelihood"],
        "embed": [],
    }
    for name, methods in defaults.items():
        s = sub.add_parser(name)
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--seeds", type=int, nargs="+", default=[0])
        s.add_argument("--methods", nargs="+", default=methods)
        s.add_argument("--n-authors", type=int, nargs="+", default=[2, 5])
        s.add_argument("--triplets", type=int, default=200)
        s.add_argument(
            "--train-pairs",
            type=int,
            default=200,
            help="choose: training pairs llm-likelihood draws from the train "
            "corpus; verify: a balanced seeded subset of the train split",
        )
        s.add_argument("--groups", type=int, default=10, help="one-to-many groups per repeat")
        s.add_argument("--repeats", type=int, default=3, help="one-to-many repeats")
        s.add_argument("--test-pairs", type=int, default=500)
        s.add_argument(
            "--max-text-tokens",
            type=int,
            default=256,
            help="tokens llm-likelihood keeps from the start of each text",
        )
    args = p.parse_args(argv)
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M:%S')} load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )
    {"embed": cmd_embed, "choose": cmd_choose, "rank": cmd_rank, "verify": cmd_verify}[args.cmd](
        args
    )
    print(f"# done, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
