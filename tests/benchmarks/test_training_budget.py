"""benchmarks/training_budget: its joined documents and its summary's ratios."""

import numpy as np
import pandas as pd

from benchmarks.training_budget import joined, summary
from stylo.corpus import Corpus


def test_joined_documents_are_one_authors_texts_k_at_a_time():
    authors = ["a"] * 7 + ["b"] * 3
    corpus = Corpus.from_lists([f"{a}{i}" for i, a in enumerate(authors)], authors)
    assert joined(corpus, 1, 0) is corpus
    out = joined(corpus, 3, 0)
    # a: two documents of three (one text left out), b: one
    assert sorted(out.authors) == ["a", "a", "b"]
    for text, author in zip(out.texts, out.authors):
        parts = text.split("\n\n")
        assert len(parts) == 3 and all(p.startswith(author) for p in parts)
    used = [p for t in out.texts for p in t.split("\n\n")]
    assert len(set(used)) == len(used) == 9
    assert list(joined(corpus, 3, 0).texts) == list(out.texts)


def test_summary_means_medians_maxima_and_ratios_per_method():
    rows = pd.DataFrame(
        {
            "method": ["m"] * 4 + ["n"] * 2,
            "pairs": [10, 10, 40, 40, 10, 40],
            "auc": [0.6, 0.8, 0.9, 0.7, 0.5, 0.5],
            "seconds": [1.0, 3.0, 8.0, 8.0, 2.0, 2.0],
            "peak_gb": [1.0, 2.0, 3.0, 5.0, 1.0, 1.0],
        }
    )
    out = summary(rows).set_index(["method", "pairs"])
    assert np.isclose(out.loc[("m", 10), "auc"], 0.7) and out.loc[("m", 10), "seconds"] == 2.0
    assert out.loc[("m", 40), "time_x"] == 4.0 and out.loc[("m", 40), "memory_x"] == 2.5
    assert np.isclose(out.loc[("m", 10), "auc_vs_largest"], -0.1)
    assert out.loc[("n", 40), "time_x"] == 1.0 and out.loc[("n", 10), "auc_vs_largest"] == 0.0
