"""The likelihood verifier's settings: the rule that picks a candidate, the registry agreeing
with the chosen one, and the training-only triplets the rule is measured on."""

import numpy as np
import pandas as pd

from baselines.registry import make
from benchmarks.choose_likelihood import CANDIDATES, CHOSEN, choose, triplets
from stylo.corpus import Corpus


def test_the_registry_holds_the_chosen_candidate():
    params = make("llm-likelihood", 0).get_params()
    tokens, symmetric = CANDIDATES[CHOSEN]
    assert (params["max_text_tokens"], params["symmetric"]) == (tokens, symmetric)


def test_choose_takes_the_most_accurate_affordable_candidate():
    rows = [
        # candidate, dataset, accuracy, seconds
        ("dear", "a", 80.0, 300.0),
        ("dear", "b", 80.0, 300.0),
        ("mid", "a", 78.0, 150.0),
        ("mid", "b", 78.0, 150.0),
        ("cheap", "a", 70.0, 90.0),
        ("cheap", "b", 72.0, 90.0),
        ("cheapest", "a", 60.0, 30.0),
        ("cheapest", "b", 60.0, 30.0),
    ]
    table = pd.DataFrame(rows, columns=["candidate", "dataset", "accuracy", "seconds"])
    assert choose(table) == "cheap"  # 180 s of 600: within the budget; mid's 300 is not
    # the budget is relative to the costliest candidate left: now mid's 300 s
    assert choose(table[table.candidate != "dear"]) == "cheapest"


def test_triplets_hold_one_text_of_the_queries_author_and_one_of_another():
    texts = [f"t{i}" for i in range(30)]
    authors = [f"a{i % 6}" for i in range(30)]
    corpus = Corpus.from_lists(texts, authors)
    author_of = dict(zip(texts, authors))
    queries, lists, right = triplets(corpus, 50, seed=3)
    assert len(queries) == len(lists) == len(right) == 50
    for q, (c0, c1), k in zip(queries, lists, right):
        same, other = (c0, c1) if k == 0 else (c1, c0)
        assert author_of[same] == author_of[q] != author_of[other] and same != q
    assert 10 < int(np.sum(right)) < 40  # both positions hold the right answer
    again = triplets(corpus, 50, seed=3)
    assert again[0] == queries and again[1] == lists
