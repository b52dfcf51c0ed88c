"""Acceptance measurements for the LLM, embedding and RAG methods (issue 5).

Until ``stylo.protocols`` lands, this script draws its own AIDBench-style problems (documented
below, seeded); the metrics come from ``stylo.metrics``. Every sub-command prints a tidy table
and the cost (model calls, tokens, seconds).

    python -m benchmarks.llm_acceptance embed   --n-authors 2 5 --queries 100
    python -m benchmarks.llm_acceptance choose  --triplets 200
    python -m benchmarks.llm_acceptance rank    --n-authors 5 --queries 50 --per-author 2
    python -m benchmarks.llm_acceptance rag     --n-authors 5 --queries 50 --keep 10
    python -m benchmarks.llm_acceptance likelihood --test-pairs 500

Sampling (all with ``numpy.random.default_rng(seed)``):

- one-to-many on mlpapers: authors are first authors with at least ``per_author + 1`` abstracts
  of >= 10 words. A problem picks ``n_authors`` authors and ``per_author + 1`` abstracts of the
  first (one is the query) and ``per_author`` of each other; the candidates are all but the
  query, shuffled; relevant = same first author.
- one-to-two on IMDb62: a triplet picks two authors A != B, two reviews of A (query and the
  true candidate) and one of B; the true candidate's position is random.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from stylo.datasets import load
from stylo.metrics.pan import auc, c_at_1
from stylo.metrics.ranking import expected_rank_at_k_random, mrr, rank_at_k

MIN_WORDS = 10


def _eligible(corpus, min_texts: int) -> dict[str, np.ndarray]:
    words = corpus.frame["text"].str.split().str.len().to_numpy()
    ok = words >= MIN_WORDS
    groups = {a: idx[ok[idx]] for a, idx in corpus.by_author().items()}
    return {a: idx for a, idx in groups.items() if len(idx) >= min_texts}


def one_to_many(corpus, n_authors: int, per_author: int, n_queries: int, seed: int):
    """Problems as (query, candidates, relevant mask)."""
    rng = np.random.default_rng(seed)
    groups = _eligible(corpus, per_author + 1)
    names = sorted(groups)
    texts = corpus.texts
    out = []
    for _ in range(n_queries):
        chosen = rng.choice(len(names), size=n_authors, replace=False)
        first = rng.choice(groups[names[chosen[0]]], size=per_author + 1, replace=False)
        query, cand_idx, rel = first[0], list(first[1:]), [True] * per_author
        for a in chosen[1:]:
            cand_idx += list(rng.choice(groups[names[a]], size=per_author, replace=False))
            rel += [False] * per_author
        perm = rng.permutation(len(cand_idx))
        out.append((texts[query], [texts[cand_idx[i]] for i in perm],
                    np.asarray(rel)[perm]))
    return out


def one_to_two(corpus, n_triplets: int, seed: int):
    """Triplets as (query, candidate_a, candidate_b, index of the true candidate)."""
    rng = np.random.default_rng(seed)
    groups = _eligible(corpus, 2)
    names = sorted(groups)
    texts = corpus.texts
    out = []
    for _ in range(n_triplets):
        a, b = rng.choice(len(names), size=2, replace=False)
        q, pos = rng.choice(groups[names[a]], size=2, replace=False)
        neg = rng.choice(groups[names[b]])
        truth = int(rng.integers(2))
        pair = (texts[pos], texts[neg]) if truth == 0 else (texts[neg], texts[pos])
        out.append((texts[q], *pair, truth))
    return out


def _rank_table(method, problems, label: str) -> pd.DataFrame:
    start = time.perf_counter()
    scores = [method.rank(q, c) for q, c, _ in problems]
    seconds = time.perf_counter() - start
    rows = []
    for k in (1, 3, 5):
        vals = [rank_at_k(s, r, k) for s, (_, _, r) in zip(scores, problems, strict=True)]
        rnd = [expected_rank_at_k_random(len(r), int(r.sum()), k) for _, _, r in problems]
        rows.append({"method": label, "metric": f"rank@{k}", "value": 100 * np.mean(vals),
                     "random": 100 * np.mean(rnd), "n": len(problems)})
    vals = [mrr(s, r) for s, (_, _, r) in zip(scores, problems, strict=True)]
    rows.append({"method": label, "metric": "mrr", "value": np.mean(vals), "random": np.nan,
                 "n": len(problems)})
    out = pd.DataFrame(rows)
    out["seconds"] = seconds
    return out


def _cost(method) -> str:
    backend = getattr(method, "backend_", None)
    if backend is None:
        return ""
    calls = backend.calls_frame()
    return (f"calls={len(calls)} (model {backend.n_backend_calls}, cached "
            f"{int(calls['cached'].sum())}), prompt_tokens={int(calls['prompt_tokens'].sum())}, "
            f"completion_tokens={int(calls['completion_tokens'].sum())}, "
            f"model_seconds={calls['seconds'].sum():.1f}")


def _answers_summary(method) -> str:
    ans = method.answers_frame()
    return ", ".join(f"{k}={v}" for k, v in ans["status"].value_counts().items())


def cmd_embed(args) -> None:
    from baselines.embedding import EmbeddingSearch
    corpus = load("mlpapers")
    m = EmbeddingSearch().fit()
    for n in args.n_authors:
        problems = one_to_many(corpus, n, args.per_author, args.queries, args.seed)
        print(_rank_table(m, problems, f"embedding, {n} authors").to_string(index=False))


def _llm(args):
    from baselines.llm import PromptedLLM
    return PromptedLLM(prompt=args.prompt).fit()


def cmd_choose(args) -> None:
    corpus = load("imdb62")
    m = _llm(args)
    triplets = one_to_two(corpus, args.triplets, args.seed)
    start = time.perf_counter()
    picks = np.array([m.choose(q, a, b) for q, a, b, _ in triplets])
    seconds = time.perf_counter() - start
    truth = np.array([t for *_, t in triplets])
    ans = m.answers_frame()
    answered = (ans["status"] == "ok").to_numpy()
    print(f"one-to-two imdb62, {len(triplets)} triplets, prompt={args.prompt}: "
          f"accuracy={np.mean(picks == truth):.3f} (random 0.5), accuracy on answered="
          f"{np.mean((picks == truth)[answered]) if answered.any() else float('nan'):.3f}, "
          f"answered={answered.mean():.3f}, first-candidate picks={np.mean(picks == 0):.3f}, "
          f"seconds={seconds:.1f}")
    print(f"  answers: {_answers_summary(m)}")
    print(f"  cost: {_cost(m)}")


def cmd_rank(args) -> None:
    corpus = load("mlpapers")
    m = _llm(args)
    for n in args.n_authors:
        problems = one_to_many(corpus, n, args.per_author, args.queries, args.seed)
        print(_rank_table(m, problems, f"llm {args.prompt}, {n} authors").to_string(index=False))
    print(f"  answers: {_answers_summary(m)}")
    print(f"  cost: {_cost(m)}")


def cmd_rag(args) -> None:
    from baselines.embedding import EmbeddingSearch
    from baselines.llm import PromptedLLM
    from baselines.rag import RAGRanker
    corpus = load("mlpapers")
    rag = RAGRanker(EmbeddingSearch(), PromptedLLM(prompt=args.prompt), keep=args.keep).fit()
    for n in args.n_authors:
        problems = one_to_many(corpus, n, args.per_author, args.queries, args.seed)
        print(_rank_table(rag, problems, f"rag keep {args.keep}, {n} authors")
              .to_string(index=False))
    print(f"  answers: {_answers_summary(rag.reranker_)}")
    print(f"  cost: {_cost(rag.reranker_)}")


def cmd_likelihood(args) -> None:
    from baselines.llm import LikelihoodVerifier
    pairs = load("pan15_av_en")
    train, test = pairs.split("train"), pairs.split("test")
    if args.test_pairs < len(test):
        # a balanced, seeded subset of the test problems
        rng = np.random.default_rng(args.seed)
        lab = test.labels
        k = args.test_pairs // 2
        pick = np.sort(np.r_[rng.choice(np.flatnonzero(lab), k, replace=False),
                             rng.choice(np.flatnonzero(~lab), args.test_pairs - k,
                                        replace=False)])
        test = test.subset(pick)
    start = time.perf_counter()
    m = LikelihoodVerifier(max_text_tokens=args.max_text_tokens).fit(train)
    fit_s = time.perf_counter() - start
    s = m.score_problems(test)
    seconds = time.perf_counter() - start
    drops = m.drops(test.texts_a(), test.texts_b()).mean(axis=1)
    print(f"likelihood verifier pan15_av_en: train {len(train)} -> test {len(test)} problems, "
          f"max_text_tokens={args.max_text_tokens}: AUC={auc(test.labels, s):.4f}, "
          f"c@1={c_at_1(test.labels, s):.4f}, AUC of the raw mean drop="
          f"{auc(test.labels, drops):.4f}; fit {fit_s:.1f} s, total {seconds:.1f} s")
    print(f"  cost: {_cost(m)}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("embed", "choose", "rank", "rag", "likelihood"):
        s = sub.add_parser(name)
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--prompt", default="general")
        s.add_argument("--n-authors", type=int, nargs="+", default=[2, 5])
        s.add_argument("--per-author", type=int, default=10)
        s.add_argument("--queries", type=int, default=100)
        s.add_argument("--triplets", type=int, default=200)
        s.add_argument("--keep", type=int, default=10)
        s.add_argument("--test-pairs", type=int, default=500)
        s.add_argument("--max-text-tokens", type=int, default=256)
    args = p.parse_args(argv)
    {"embed": cmd_embed, "choose": cmd_choose, "rank": cmd_rank, "rag": cmd_rag,
     "likelihood": cmd_likelihood}[args.cmd](args)


if __name__ == "__main__":
    main()
