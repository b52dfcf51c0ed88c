"""Compression-based verification: PPM cross-entropy (PAN's compressor baseline), zstd NCD,
CDM and dictionary cross-entropy, each scored by logistic regression on the pair's two
directional measures.

Sources and defaults:

- ``measure="ppm"``: the PAN 2020-2022 compressor baseline (pan-code
  ``clef22/authorship-verification/pan22-verif-baseline-compressor.py``; Teahan & Harper,
  "Using compression-based language models for text categorization", 2003; Potthast et al.,
  "Who wrote the web?", ECIR 2016): the cross-entropy of B under an order-5 character model of
  A and of A under the model of B (see :mod:`baselines._ppm`; alphabet size 256 as there).
- ``measure="ncd"``: normalised compression distance (Cilibrasi & Vitanyi, "Clustering by
  compression", IEEE Trans. Inf. Theory 51(4), 2005), NCD = (C(xy) - min(C(x), C(y))) /
  max(C(x), C(y)), once with xy = A+B and once with B+A.
- ``measure="cdm"``: compression-based dissimilarity (Keogh, Lonardi & Ratanamahatana,
  "Towards parameter-free data mining", KDD 2004), C(xy) / (C(x) + C(y)), both orders.
- ``measure="xent"``: dictionary cross-entropy, bits per character of B compressed with A as
  a raw-content zstd dictionary, and of A with B (the "prefix" idea of Benedetto, Caglioti &
  Loreto, "Language trees and zipping", PRL 88, 2002, with zstd's dictionary in place of
  concatenation).

C(.) is the size in bytes of the zstd frame of the UTF-8 text (no checksum, no content size).
The zstd level is part of each measure, not a speed setting: :data:`DEFAULT_LEVELS` (3 for NCD
and CDM, 4 for the cross-entropy) were chosen on training data only
(``benchmarks/choose_compression.py``: held-out AUC on the training parts of ten verification
corpora, macro-F1 on PAN18's training problems), where they beat the former level 9 on both,
at a third of its compression time. The two directional measures d1, d2 of a pair are turned into a
score by a logistic regression on [mean(d1, d2), |d1 - d2|] fitted on labelled training pairs,
as the compressor baseline's documentation describes (its code feeds [d1, d2] directly:
``features="raw"``). Scores within ``radius`` of 0.5 become exactly 0.5 (no answer), as there
(radius 0.01).
"""

from __future__ import annotations

import numpy as np
import zstandard
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from baselines._blas import fit_one_thread
from baselines._ppm import ppm_cross_entropies
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, training_pairs

__all__ = [
    "CompressionVerifier",
    "DEFAULT_LEVELS",
    "MEASURES",
    "clear_memo",
    "compression_measures",
    "memo_family",
]

MEASURES = ("ppm", "ncd", "cdm", "xent")
#: zstd level of each zstd measure when none is given (``benchmarks/choose_compression.py``)
DEFAULT_LEVELS = {"ncd": 3, "cdm": 3, "xent": 4}


def _zstd_compressor(level: int) -> zstandard.ZstdCompressor:
    return zstandard.ZstdCompressor(level=level, write_checksum=False, write_content_size=False)


def _zstd_sizes(texts: list[bytes], level: int) -> np.ndarray:
    """(n, 1) compressed sizes of byte strings."""
    cctx = _zstd_compressor(level)
    return np.array([[len(cctx.compress(t))] for t in texts], dtype=np.float64).reshape(-1, 1)


def _zstd_concat_sizes(pairs: list[tuple[bytes, bytes]], level: int) -> np.ndarray:
    """(n, 2) compressed sizes of a+b and b+a for byte pairs."""
    cctx = _zstd_compressor(level)
    out = np.empty((len(pairs), 2), dtype=np.float64)
    for i, (a, b) in enumerate(pairs):
        out[i] = len(cctx.compress(a + b)), len(cctx.compress(b + a))
    return out


def _zstd_dict_bits(groups: list[tuple[bytes, list[tuple[bytes, int]]]], level: int) -> np.ndarray:
    """(n, 1) bits per character of each text of each group compressed with the group's
    reference as a raw-content zstd dictionary; rows in group order. A group is (reference,
    [(text, n_chars), ...]). One compressor serves a whole group: loading a dictionary costs
    about what compressing its text does, and gives the same frames every time."""
    out = []
    for ref, texts in groups:
        cctx = zstandard.ZstdCompressor(
            level=level,
            dict_data=zstandard.ZstdCompressionDict(ref, dict_type=zstandard.DICT_TYPE_RAWCONTENT),
            write_checksum=False,
            write_content_size=False,
            write_dict_id=False,
        )
        out.extend(8.0 * len(cctx.compress(x)) / n_chars for x, n_chars in texts)
    return np.array(out, dtype=np.float64).reshape(-1, 1)


def _xent(pairs: list[tuple[str, str]], level: int, n_jobs: int) -> np.ndarray:
    """(n, 2) dictionary cross-entropies: b with a as dictionary, and a with b. Measures are
    grouped by their dictionary text, since attribution pairs every unknown text with every
    candidate's profile, and both serve as a dictionary many times."""
    slots: dict[str, list[tuple[int, int]]] = {}
    for i, (a, b) in enumerate(pairs):
        slots.setdefault(a, []).append((i, 0))
        slots.setdefault(b, []).append((i, 1))
    encoded = {t: _utf8(t) for t in slots}
    # the largest groups first, dealt round-robin, so that the threads' shares are even
    refs = sorted(slots, key=lambda t: -len(slots[t]) * len(t))
    groups = [
        (encoded[ref], [(encoded[pairs[i][1 - j]], len(pairs[i][1 - j])) for i, j in slots[ref]])
        for ref in refs
    ]
    batches = _batches(groups, n_jobs)
    with Parallel(n_jobs=n_jobs, prefer="threads") as par:
        parts = par(delayed(_zstd_dict_bits)(b, level) for b in batches)
    out = np.empty((len(pairs), 2), dtype=np.float64)
    for k, part in enumerate(parts):
        where = [slot for ref in refs[k :: len(batches)] for slot in slots[ref]]
        rows, cols = np.array(where, dtype=np.int64).reshape(-1, 2).T
        out[rows, cols] = part[:, 0]
    return out


def _batches(items: list, n_jobs: int) -> list[list]:
    k = max(1, min(len(items), 4 * effective_n_jobs(n_jobs)))
    return [items[i::k] for i in range(k)]


def _unbatch(parts: list[np.ndarray], n: int, k: int) -> np.ndarray:
    out = np.empty((n, parts[0].shape[1]), dtype=np.float64)
    for i, part in enumerate(parts):
        out[i::k] = part
    return out


#: measures of recent pairs, per measure family and setting: the methods of one task share them
#: (``cdm``, ``cdm-cal``, ``ncd`` and ``ncd-cal`` score the same pairs with the same sizes)
_MEMO: dict[tuple, dict[tuple[str, str], np.ndarray]] = {}
_MEMO_PAIRS = 200_000


def memo_family(measure: str) -> str:
    """The memo a measure's pairs are kept in: NCD and CDM come from the same four sizes."""
    return "zstd" if measure in ("ncd", "cdm") else measure


def clear_memo() -> None:
    """Forget every measured pair (a benchmark's cold run measures them all again)."""
    _MEMO.clear()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _in_threads(fn, items: list, level: int, n_jobs: int) -> np.ndarray:
    """``fn(batch, level)`` over ``items`` in ``n_jobs`` threads, rows back in item order."""
    batches = _batches(items, n_jobs)
    with Parallel(n_jobs=n_jobs, prefer="threads") as par:
        parts = par(delayed(fn)(b, level) for b in batches)
    return _unbatch(parts, len(items), len(batches))


def _measures(
    pairs: list[tuple[str, str]], measure: str, level: int, ppm_order: int, n_jobs: int
) -> np.ndarray:
    """(n, 2) measures for ``"ppm"`` and ``"xent"``; for ``"zstd"`` the (n, 4) sizes C(a),
    C(b), C(a+b), C(b+a) that NCD and CDM are computed from."""
    if measure == "ppm":
        return ppm_cross_entropies(
            [a for a, _ in pairs], [b for _, b in pairs], order=ppm_order, n_jobs=n_jobs
        )
    if measure == "xent":
        return _xent(pairs, level, n_jobs)
    # attribution scores every candidate profile against every unknown: size each text once
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    single = dict(
        zip(
            texts,
            _in_threads(_zstd_sizes, [_utf8(t) for t in texts], level, n_jobs)[:, 0],
            strict=True,
        )
    )
    cab, cba = _in_threads(
        _zstd_concat_sizes, [(_utf8(a), _utf8(b)) for a, b in pairs], level, n_jobs
    ).T
    ca = np.array([single[a] for a, _ in pairs])
    cb = np.array([single[b] for _, b in pairs])
    return np.column_stack((ca, cb, cab, cba))


def _zstd_level(measure: str, level: int | None) -> int:
    """The zstd level ``measure`` runs at: ``level``, validated, or its default (0 for PPM)."""
    if measure == "ppm":
        return 0
    if level is None:
        return DEFAULT_LEVELS[measure]
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise ValueError(f"level must be an int or None, got {level!r}")
    if not 1 <= level <= zstandard.MAX_COMPRESSION_LEVEL:
        raise ValueError(f"level must be in [1, {zstandard.MAX_COMPRESSION_LEVEL}], got {level}")
    return int(level)


def compression_measures(
    texts_a: list[str],
    texts_b: list[str],
    measure: str = "ppm",
    level: int | None = None,
    ppm_order: int = 5,
    n_jobs: int = 1,
) -> np.ndarray:
    """(n, 2) directional measures (d1, d2) of each pair of non-empty texts; lower = closer.

    For ``"ppm"`` and ``"xent"`` d1 is about B given A and d2 about A given B; for ``"ncd"``
    and ``"cdm"`` d1 uses the concatenation A+B and d2 uses B+A. ``level`` is the zstd level
    (None: the measure's :data:`DEFAULT_LEVELS`; unused by ``"ppm"``). zstd measures run in
    ``n_jobs`` threads (zstandard and the PPM kernel release the GIL). A pair measured before
    with the same settings (in this process) is not measured again.
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose from {MEASURES}")
    level = _zstd_level(measure, level)
    if len(texts_a) != len(texts_b):
        raise ValueError(f"texts_a has {len(texts_a)} items but texts_b has {len(texts_b)}")
    pairs = list(zip(texts_a, texts_b))
    if not pairs:
        return np.empty((0, 2), dtype=np.float64)
    family = memo_family(measure)
    memo = _MEMO.setdefault((family, level if family != "ppm" else int(ppm_order)), {})
    distinct = list(dict.fromkeys(pairs))
    todo = [p for p in distinct if p not in memo]
    if len(memo) + len(todo) > _MEMO_PAIRS:
        # full: forget every pair but those this call reads from the memo
        kept = {p: memo[p] for p in distinct if p in memo}
        memo.clear()
        memo.update(kept)
    if todo:
        memo.update(zip(todo, _measures(todo, family, level, ppm_order, n_jobs), strict=True))
    values = np.array([memo[p] for p in pairs], dtype=np.float64)
    if family != "zstd":
        return values
    ca, cb, cab, cba = values.T
    if measure == "ncd":
        lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
        return np.column_stack(((cab - lo) / hi, (cba - lo) / hi))
    return np.column_stack((cab / (ca + cb), cba / (ca + cb)))


class CompressionVerifier(Verifier):
    """Logistic regression on two directional compression measures of a pair.

    Parameters
    ----------
    measure : ``"ppm"`` (default, PAN's compressor baseline), ``"ncd"``, ``"cdm"`` or
        ``"xent"`` (see the module docstring).
    features : ``"mean_absdiff"`` ([mean, |d1 - d2|], default) or ``"raw"`` ([d1, d2]).
    radius : scores in [0.5 - radius, 0.5 + radius] become 0.5 (PAN's baseline: 0.01).
    level : zstd compression level of the zstd measures, 1-22 (None: the level chosen for the
        measure on training data, :data:`DEFAULT_LEVELS`).
    ppm_order : context length of the PPM model (5).
    standardize : z-score the two features before the logistic regression. zstd measures
        vary by hundredths, too little for an unscaled, L2-regularised logistic regression to
        leave 0.5; PAN's PPM baseline does not scale (``"auto"``: scale all but ``"ppm"``).
    n_jobs : threads (joblib's convention: -1 = all cores).
    n_pairs, random_state : training pairs drawn when fitted on a Corpus.

    Fitted attributes: ``level_`` (the zstd level used; 0 for PPM), ``model_`` (the
    LogisticRegression, after a StandardScaler if scaled).
    """

    def __init__(
        self,
        measure: str = "ppm",
        features: str = "mean_absdiff",
        radius: float = 0.01,
        level: int | None = None,
        ppm_order: int = 5,
        standardize: bool | str = "auto",
        n_jobs: int = 1,
        n_pairs: int = 200,
        random_state: int = 0,
    ):
        self.measure = measure
        self.features = features
        self.radius = radius
        self.level = level
        self.ppm_order = ppm_order
        self.standardize = standardize
        self.n_jobs = n_jobs
        self.n_pairs = n_pairs
        self.random_state = random_state

    def _design(self, texts_a, texts_b) -> np.ndarray:
        d = compression_measures(
            texts_a, texts_b, self.measure, self.level_, self.ppm_order, self.n_jobs
        )
        if self.features == "raw":
            return d
        return np.column_stack((d.mean(axis=1), np.abs(d[:, 0] - d[:, 1])))

    def _fit_impl(self, X, y) -> None:
        if self.measure not in MEASURES:
            raise ValueError(f"unknown measure {self.measure!r}; choose from {MEASURES}")
        if self.features not in ("mean_absdiff", "raw"):
            raise ValueError(f"features must be 'mean_absdiff' or 'raw', got {self.features!r}")
        if not 0.0 <= self.radius < 0.5:
            raise ValueError(f"radius must be in [0, 0.5), got {self.radius}")
        self.level_ = _zstd_level(self.measure, self.level)
        pairs = training_pairs(X, n_pairs=self.n_pairs, seed=self.random_state)
        keep = np.array(
            [has_text(a) and has_text(b) for a, b in zip(pairs.texts_a(), pairs.texts_b())]
        )
        if not keep.all():
            raise ValueError(f"{int((~keep).sum())} training pair(s) have an empty text")
        y_train = pairs.labels
        if y_train.all() or not y_train.any():
            raise ValueError("training pairs need both same-author and different-author pairs")
        scale = self.measure != "ppm" if self.standardize == "auto" else bool(self.standardize)
        model = (
            make_pipeline(StandardScaler(), LogisticRegression()) if scale else LogisticRegression()
        )
        self.model_ = fit_one_thread(model, self._design(pairs.texts_a(), pairs.texts_b()), y_train)

    def _score_impl(self, texts_a, texts_b):
        p = self.model_.predict_proba(self._design(texts_a, texts_b))[:, 1]
        p[np.abs(p - NO_ANSWER) <= self.radius] = NO_ANSWER
        return p
