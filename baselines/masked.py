"""Topic masking in front of any verifier: the with-vs-without comparison of topic-controlled
splits (Stamatatos 2017 text distortion; named-entity masking as in "Rethinking the
authorship verification experimental setups", Brad et al. 2022).

``MaskedVerifier(verifier, masker)`` fits ``masker`` (a text-to-text transformer from
:mod:`stylo.features.masking`) on the training texts, masks every text the inner verifier
sees (training and test alike), and otherwise behaves exactly like the inner verifier.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from contextlib import nullcontext

from joblib import hash as joblib_hash
from sklearn.base import clone

from stylo.corpus import Corpus
from stylo.features.shared_counts import active as active_counts
from stylo.features.shared_counts import serving
from stylo.verifier import Verifier
from stylo.verifier_wrapper import VerifierWrapper

__all__ = ["MaskedVerifier"]

#: masked texts of recently fitted maskers, keyed by the fitted masker's hash: protocols score
#: the same texts many times (a text in several pairs, several methods behind one masking on
#: one task), and masking long texts costs more than some of the verifiers behind it
_MASKED: OrderedDict[str, dict[str, str]] = OrderedDict()
_MASKERS_KEPT = 2
_TEXTS_KEPT = 100_000  # per masker; an unfitted-as-fitted masker keeps one key for every task
#: fitted maskers keyed by (unfitted masker, training texts): the grid's masked cells of several
#: methods on one task fit the same masker on the same texts in turn, and a TextDistortion's
#: word count over long training texts costs about half a second
_FITTED: OrderedDict[tuple[str, str], object] = OrderedDict()


def _recent(cache: OrderedDict, key, make):
    """``cache[key]``, made by ``make()`` when missing; the cache keeps the ``_MASKERS_KEPT``
    most recently used entries."""
    if key in cache:
        cache.move_to_end(key)
    else:
        cache[key] = make()
        if len(cache) > _MASKERS_KEPT:
            cache.popitem(last=False)
    return cache[key]


class MaskedVerifier(VerifierWrapper):
    """``verifier`` applied to texts rewritten by ``masker``.

    Parameters
    ----------
    verifier : an unfitted :class:`~stylo.verifier.Verifier`.
    masker : a scikit-learn transformer mapping ``list[str]`` to ``list[str]``
        (``TextDistortion``, ``EntityMasker``), fitted on the training texts.
    """

    def __init__(self, verifier: Verifier, masker):
        self.verifier = verifier
        self.masker = masker

    def _fit_impl(self, X, y) -> None:
        # with no data the masker must work unfitted-as-fitted: nothing to learn a vocabulary from
        texts = [] if X is None else self._texts_of(X)
        unfitted = clone(self.masker)
        key = (joblib_hash(unfitted), joblib_hash(texts))
        self.masker_ = copy.deepcopy(_recent(_FITTED, key, lambda: unfitted.fit(texts)))
        self.masker_key_ = joblib_hash(self.masker_)
        with self._masked_counts():
            super()._fit_impl(X, y)

    def _score_impl(self, texts_a, texts_b):
        with self._masked_counts():
            return super()._score_impl(texts_a, texts_b)

    def _problem_impl(self, known_lists, unknowns):
        with self._masked_counts():
            return super()._problem_impl(known_lists, unknowns)

    def _rank_many_impl(self, queries, candidate_lists):
        with self._masked_counts():
            return super()._rank_many_impl(queries, candidate_lists)

    def _attribute_impl(self, candidates, texts):
        with self._masked_counts():
            return super()._attribute_impl(candidates, texts)

    def _masked_counts(self):
        """Inside a ``shared_counts`` context (a grid task's cells run in one), one over the
        masked forms of its texts for the inner verifier, made once per fitted masker and kept
        beside the context's own: the task's masked cells count each masked text once per
        configuration, as its unmasked cells do the texts (the matrices those of counting
        afresh). A null context outside one."""
        outer = active_counts()
        if outer is None:
            return nullcontext()
        return serving(outer.derived(self.masker_key_, self._texts_in))

    @staticmethod
    def _texts_of(X) -> list[str]:
        if isinstance(X, Corpus):
            return X.texts
        return [t for known in X.known for t in known] + X.unknown

    def _texts_in(self, texts: list[str]) -> list[str]:
        """``texts`` masked, each distinct text through the masker once (see ``_MASKED``)."""
        done = _recent(_MASKED, self.masker_key_, dict)
        new = [t for t in dict.fromkeys(texts) if t not in done]
        if len(done) + len(new) > _TEXTS_KEPT:
            done.clear()
        if new:
            done.update(zip(new, self.masker_.transform(new), strict=True))
        return [done[t] for t in texts]
