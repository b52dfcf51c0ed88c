"""One author label per person in corpora whose problems reuse their authors.

PAN's cross-domain attribution corpora are built as problems, and a problem's candidates are
named only inside it (``candidate00003``), so the files give one person a label per problem:
PAN 2018's problems of one language and split draw their candidates from the same 20 people,
each with the same seven known texts in every problem (375 labels, 200 people; 2,188 of 4,561
rows repeat another row's text), and PAN 2019's development problems reuse some authors too
(181 labels, 158 people). Protocols that pool texts by author across problems (closed-set
attribution, the Rethinking-AV splits) would otherwise treat one person as several candidates,
or put a text in training under one label and in the test under another.

:func:`merge_authors_by_text` gives every label that shares an identical text with another
label the same author: the connected components of the label-text graph, each named by its
smallest label. A text whose author is a placeholder (PAN 2019's ``<UNK>``: by none of that
problem's candidates) gets the author of an identical text elsewhere, when there is one. The
problem-local columns (``problem``, ``candidate``, ``role``) stay as they were, so PAN's own
problems are unchanged. Rows are neither dropped nor merged here: each problem keeps its copy
of a text (:func:`stylo.protocols.base.distinct_texts` drops the repeats where texts are
pooled).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from stylo.corpus import UNKNOWN_AUTHORS, Corpus, FilterStep

__all__ = ["merge_authors_by_text"]


def merge_authors_by_text(corpus: Corpus) -> Corpus:
    """``corpus`` with ``author`` replaced by one label per connected set of labels that share
    an identical text; the step and its counts go to ``history`` (rows unchanged)."""
    frame = corpus.frame
    authors = frame["author"].astype(str).to_numpy()
    texts = frame["text"].to_numpy()
    named = ~np.isin(authors, list(UNKNOWN_AUTHORS))
    if not named.any():
        return corpus
    # hashed, not np.unique: sorting the texts would copy them into one fixed-width array
    label_ix, labels = pd.factorize(authors[named], sort=True)
    text_ix, _ = pd.factorize(texts[named])
    n_labels, n_texts = len(labels), int(text_ix.max()) + 1
    # bipartite graph: label i -- text j whenever a row has both
    graph = coo_matrix(
        (np.ones(len(label_ix)), (label_ix, n_labels + text_ix)),
        shape=(n_labels + n_texts, n_labels + n_texts),
    )
    _, component = connected_components(graph, directed=False)
    # the labels are sorted, so the first label met in a component is its smallest
    first = pd.Series(labels).groupby(component[:n_labels]).transform("first").to_numpy()
    merged = authors.copy()
    merged[named] = first[label_ix]
    of_text = dict(zip(texts[named], merged[named]))
    resolved = np.array([of_text.get(t) for t in texts[~named]], dtype=object)
    found = pd.notna(resolved)
    placeholder_rows = np.flatnonzero(~named)
    merged[placeholder_rows[found]] = resolved[found].astype(str)
    out = frame.copy()
    out["author"] = merged
    n_people = len(np.unique(first))
    history = [
        *corpus.history,
        FilterStep(
            "authors merged by identical texts",
            len(frame),
            len(out),
            f"{n_labels} author labels -> {n_people} authors; "
            f"{int(found.sum())} texts by {sorted(UNKNOWN_AUTHORS)} given the author of an "
            f"identical text",
        ),
    ]
    return Corpus(out, name=corpus.name, history=history)
