"""The n-gram extractors' internal Numba kernels == their plain Python references."""

import re
import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from ngram_alphabet import ALPHABET
from sklearn.feature_extraction.text import CountVectorizer

from stylo.features import CharNgrams
from stylo.features._columns import argsort_keys, local_columns, merge_sorted, remap_rows
from stylo.features._entries import EntryStore
from stylo.features._reference import argsort_keys as argsort_keys_reference
from stylo.features._reference import merge_sorted as merge_sorted_reference
from stylo.features._reference import tokenize
from stylo.features._segments import TextChunk, text_segments
from stylo.features._tokens import (
    TokenChunk,
    intern_tokens,
    merge_tokens,
    sort_tokens,
    token_buffer,
    token_positions,
    token_strings,
    token_symbols,
)
from stylo.features._utf8 import (
    LOWER_SPECIAL,
    N_CODEPOINTS,
    char_table,
    class_counts,
    encode_utf8,
    lower_table,
)
from stylo.features.function_words import CHAR_CLASSES, _class_table


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 3000)), min_size=1, max_size=4),
    st.integers(1, 3),
)
def test_entries_pack_moves_chunks_together_exactly(chunks, n_pieces):
    """EntryStore.pack == concatenating each chunk's used entries (overlapping moves included;
    chunk 0 of several written at the end of its region)."""

    bounds = [max(a, b) for a, b in chunks]
    sizes = [min(a, b) for a, b in chunks]
    entries = EntryStore(bounds)
    rng = np.random.default_rng(len(chunks))
    want_ids, want_counts = [], []
    for k, n in enumerate(sizes):
        ids, counts = entries.region(k)
        first = ids.shape[0] - n if entries.at_end(k) else 0
        ids[first : first + n] = rng.integers(0, 2**31 - 1, n)
        counts[first : first + n] = rng.integers(0, 2**62, n)
        used_ids, used_counts = entries.used(k, n)
        want_ids.append(used_ids.copy())
        want_counts.append(used_counts.copy())
        assert np.array_equal(used_ids, ids[first : first + n])
    serial = lambda f, xs: [f(x) for x in xs]  # noqa: E731
    total = entries.pack(sizes, serial, n_pieces)
    ids, counts = entries.packed(total)
    assert total == sum(sizes)
    assert np.array_equal(ids, np.concatenate(want_ids))
    assert np.array_equal(counts, np.concatenate(want_counts))


def test_codepoint_lowercasing_table_is_str_lower():
    """CharNgrams lowercases code points by table: exact for all but two code points (their
    text is lowered by Python), idempotent, and never changes whether a character is space."""

    table = lower_table()
    specials = [ord(c) for c in LOWER_SPECIAL]
    sample = np.r_[np.arange(0x3000), np.random.default_rng(0).integers(0x3000, 0x110000, 5000)]
    for c in sample:
        if c not in specials:
            assert chr(table[c]) == chr(c).lower()
    assert sorted(c for c in range(0x3000) if len(chr(c).lower()) != 1) == [0x130]
    assert np.array_equal(table[table], table)
    space = char_table("space")
    assert np.array_equal(space[table], space)
    docs = ["ΣΑΣ Ǆx İi", "ΣΑΣ ǅ", "ÉCOLE Ω"]
    cv = CountVectorizer(analyzer="char", ngram_range=(1, 3))
    ours = CharNgrams((1, 3), n_jobs=2)
    assert (ours.fit_transform(docs) != cv.fit_transform(docs)).nnz == 0
    assert list(ours.get_feature_names_out()) == list(cv.get_feature_names_out())


def test_word_and_letter_tables_hold_the_marks_and_leave_out_han_and_kana():
    """Over every code point, from ``str`` methods and ``unicodedata`` rather than the regexes
    the tables are built from: a word character is ``\\w`` or a combining mark, a letter
    ``\\w`` but digits and "_" or a combining mark; Han ideographs and kana are neither but
    "alone" (the kana voicing marks are in no class)."""

    han_kana = re.compile(
        "[\u3005\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
        "\uff66-\uff9f\U00020000-\U0003134f]"
    )
    word, letter, alone = (char_table(n).astype(bool) for n in ("word", "letter", "alone"))
    for c in range(N_CODEPOINTS):
        ch = chr(c)
        mark = unicodedata.category(ch)[0] == "M"
        w = ch.isalnum() or ch == "_"
        if han_kana.match(ch):
            assert (word[c], letter[c], alone[c]) == (False, False, w), hex(c)
        else:
            assert word[c] == (w or mark), hex(c)
            assert letter[c] == ((w and not ch.isdecimal() and ch != "_") or mark), hex(c)
            assert not alone[c], hex(c)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 399), max_size=80, unique=True), min_size=1, max_size=5),
    st.sampled_from([400, 2000, 100_000, 5_000_000]),
    st.integers(0, 2**31 - 1),
)
def test_remap_rows_kernel_matches_reference(rows, n_cols, seed):
    """remap_rows (map local ids to columns, drop unmapped, radix-sort each row in 1, 2 or
    3 passes) == the same in Python."""

    rng = np.random.default_rng(seed)
    cols = rng.permutation(n_cols)[:400]  # injective, as columns of distinct n-grams are
    local_to_col = np.where(rng.random(400) < 0.2, -1, cols).astype(np.int32)
    ids = np.array([i for r in rows for i in r], dtype=np.int32)
    counts = rng.integers(1, 1000, ids.shape[0]).astype(np.int64)
    starts = np.cumsum([0] + [len(r) for r in rows[:-1]])
    want = [
        sorted(
            (int(local_to_col[i]), int(c))
            for i, c in zip(r, counts[a : a + len(r)])
            if local_to_col[i] >= 0
        )
        for r, a in zip(rows, starts, strict=True)
    ]
    row_nnz = np.array([len(r) for r in rows], dtype=np.int64)
    out_nnz, nnz = remap_rows(row_nnz, ids, counts, local_to_col, n_cols)
    got, at = [], 0
    for m in out_nnz:
        got.append(list(zip(ids[at : at + m].tolist(), counts[at : at + m].tolist(), strict=True)))
        at += m
    assert at == nnz and got == want


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-(2**62), 2**62), unique=True, max_size=60),
    st.lists(st.integers(-(2**62), 2**62), unique=True, max_size=60),
    st.lists(st.integers(0, 20), unique=True, max_size=15),
)
def test_merge_sorted_kernel_matches_reference(a, b, shared):
    """merge_sorted (union of two sorted key arrays and where each key went) == a sorted
    set union in Python, including keys present in both."""

    a = sorted(set(a) | set(shared))
    b = sorted(set(b) | set(shared[::2]))
    union, pos_a, pos_b = merge_sorted(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
    want = merge_sorted_reference(a, b)
    assert (union.tolist(), pos_a.tolist(), pos_b.tolist()) == want


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 2**63 - 1), max_size=80),
    st.integers(0, 62),
    st.sampled_from([0, 1, 2**62]),
    st.booleans(),
)
def test_argsort_keys_kernel_matches_reference(raw, shift, offset, with_negative):
    """argsort_keys == a stable sort in Python: keys sharing low digits (left-aligned n-gram
    keys, shifted up), sharing high ones (a common offset), repeated keys, and a negative key
    (NumPy's path)."""
    keys = [min(offset + (k >> shift << shift), 2**63 - 1) for k in raw]
    keys += keys[: len(keys) // 3]  # repeats: the order of equal keys is their order
    if with_negative:
        keys.append(-5)
    got = argsort_keys(np.array(keys, dtype=np.int64))
    assert got.tolist() == argsort_keys_reference(keys)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 40), unique=True, max_size=30),
    st.randoms(use_true_random=False),
    st.booleans(),
)
def test_local_columns_kernel_matches_reference(pos, rnd, with_col):
    """local_columns: ``out[order[j]] = col[pos[j]]`` (or ``pos[j]`` with an empty col)."""

    order = list(range(len(pos)))
    rnd.shuffle(order)
    col = [rnd.randint(-1, 99) for _ in range(41)] if with_col else []
    out = local_columns(
        np.array(order, dtype=np.int64),
        np.array(pos, dtype=np.int64),
        np.array(col, dtype=np.int32),
    )
    want = [0] * len(pos)
    for j, local in enumerate(order):
        want[local] = col[pos[j]] if with_col else pos[j]
    assert out.tolist() == want


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.text(alphabet=ALPHABET + ["\ud800", "\U0010ffff", "7", "Z"], max_size=30),
        min_size=1,
        max_size=5,
    )
)
def test_class_counts_kernel_matches_reference(docs):
    """class_counts on UTF-8 (lone surrogates included) == counting each code point's class
    in Python."""

    table = _class_table()
    got = class_counts(*encode_utf8(docs), table, len(CHAR_CLASSES))
    want = np.zeros((len(docs), len(CHAR_CLASSES)), dtype=np.int64)
    for d, doc in enumerate(docs):
        for c in doc:
            want[d, table[ord(c)]] += 1
    assert (got == want).all()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.text(alphabet=ALPHABET + ["\ud800", "\u212a", "\u023a", "D"], max_size=40),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
)
def test_tokenize_text_kernel_matches_reference(docs, lowercase):
    """tokenize_text (via TokenChunk): the tokens of each document, lowered or not, are
    those of the reference tokeniser on ``str.lower()`` of it (Kelvin sign and U+023A change
    their UTF-8 length when lowered; İ and Σ take Python's lowering); ids are given in order
    of first occurrence and the distinct tokens come out sorted as Python sorts str."""

    chunk = TokenChunk(docs, lowercase)
    want = [tokenize(d.lower() if lowercase else d) for d in docs]
    distinct = token_strings(chunk.buf)
    assert distinct == sorted({t for toks in want for t in toks})
    by_id = [None] * len(distinct)
    for r, i in enumerate(chunk.order):
        by_id[i] = distinct[r]
    assert chunk.doc_tok.tolist() == np.cumsum([0] + [len(t) for t in want]).tolist()
    got = [by_id[i] for i in chunk.ids]
    assert got == [t for toks in want for t in toks]
    seen = {}
    assert chunk.ids.tolist() == [seen.setdefault(t, len(seen)) for t in got]


def test_tokens_beyond_initial_tables_and_deep_prefixes():
    """Thousands of distinct tokens (the interning table and pool grow several times), many
    sharing 24-byte prefixes (the radix sort recurses three digits deep), some long."""

    rng = np.random.default_rng(0)
    words = [f"prefixprefixprefixprefix{i}" for i in range(3000)] + [f"w{i}" for i in range(3000)]
    words += ["x" * 5000, "Y" * 40 + "z"]
    docs = [" ".join(rng.choice(words, size=400)) + " ÉTÉ" for _ in range(30)]
    chunk = TokenChunk(docs, lowercase=True)
    want = [tokenize(d.lower()) for d in docs]
    distinct = token_strings(chunk.buf)
    assert distinct == sorted({t for toks in want for t in toks})
    by_id = [None] * len(distinct)
    for r, i in enumerate(chunk.order):
        by_id[i] = distinct[r]
    assert [by_id[i] for i in chunk.ids] == [t for toks in want for t in toks]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["a", "abcdefg", "abcdefgh", "abcdefghijklmno", "abcdefghijklmnop", "é€😀"]
        ),
        min_size=1,
        max_size=30,
    )
)
def test_interning_gives_equal_tokens_one_id_wherever_they_stand(tokens):
    """intern_tokens: ids in order of first occurrence, equal tokens one id, the pool the
    distinct tokens. A token hashed within 8 bytes of the buffer's end is read byte by byte,
    elsewhere as one masked word: the lists end in tokens of 2, 8, 9, 16 and 17 bytes (with
    ``SEP``) that stood earlier as well."""
    for last in tokens[: len(tokens) // 2] or tokens:
        listed = [*tokens, last]
        ids, pool, pool_off = intern_tokens(*token_buffer(listed))
        seen = {}
        assert ids.tolist() == [seen.setdefault(t, len(seen)) for t in listed]
        assert token_strings(pool) == list(seen)
        assert pool_off.tolist() == token_buffer(list(seen))[1].tolist()


# tokens sharing 8- and 16-byte prefixes exercise every digit of the radix sort
token_lists = st.lists(
    st.tuples(
        st.sampled_from(["", "abcdefgh", "abcdefghijklmnop", "é€"]),
        st.text(alphabet="aAbé€😀_1", max_size=12),
    )
    .map("".join)
    .filter(bool),
    max_size=60,
    unique=True,
)


@settings(max_examples=80, deadline=None)
@given(token_lists, token_lists, st.data())
def test_sort_merge_and_match_token_kernels_match_reference(a, b, data):
    """sort_tokens == sorted(); merge_tokens == merge_sorted_reference on str; token_symbols ==
    a dict lookup (1-based, 0 for absent)."""

    buf, off, order = sort_tokens(*token_buffer(a))
    assert token_strings(buf) == sorted(a)
    assert [a[i] for i in order] == sorted(a)
    sa, sb = sorted(a), sorted(b)
    union, off_u, pos_a, pos_b = merge_tokens(*token_buffer(sa), *token_buffer(sb))
    want = merge_sorted_reference(sa, sb)
    assert (token_strings(union), pos_a.tolist(), pos_b.tolist()) == want
    assert off_u.tolist() == token_buffer(want[0])[1].tolist()
    ids = np.array(
        data.draw(st.lists(st.integers(0, max(len(a) - 1, 0)), max_size=30 if a else 0)),
        dtype=np.int32,
    )
    sym = token_symbols(*token_buffer(sb), buf, off, order, ids)
    index = {t: i + 1 for i, t in enumerate(sb)}
    assert sym.tolist() == [index.get(a[i], 0) for i in ids]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=ALPHABET + ["\ud800", "\udfff", "\U0010ffff"], max_size=30),
        min_size=1,
        max_size=5,
    ),
    st.booleans(),
    st.integers(3, 9),
)
def test_utf8_scan_and_segments_kernels_match_reference(docs, word_bounded, limit):
    """scan_text / text_segments on UTF-8 bytes (lone surrogates included) == the code
    points of the reference's segments: whitespace runs collapsed, or space-padded words;
    also when decoded ``limit`` symbols at a time, each open segment carried over."""
    import re

    chunk = TextChunk(docs, word_bounded)
    assert np.flatnonzero(chunk.present).tolist() == sorted({ord(c) for d in docs for c in d})
    identity = np.arange(N_CODEPOINTS, dtype=np.int32)  # symbol = code point
    space = char_table("space")
    n_sym = n_seg = 0
    for d, doc in enumerate(docs):
        a, b = chunk.doc_off[d], chunk.doc_off[d + 1]
        want = [f" {w} " for w in doc.split()] if word_bounded else [re.sub(r"\s\s+", " ", doc)]
        for lim in (limit, 2 * (b - a) + 2):  # in pieces, then the whole document
            sym = np.empty(2 * (b - a) + 3, dtype=np.int32)
            seg_off = np.empty((b - a) // 2 + 4, dtype=np.int64)
            got, at, held, inside, before = [], a, 0, False, ""
            while True:
                n, held, at, inside = text_segments(
                    chunk.text,
                    at,
                    b,
                    identity,
                    space,
                    np.int32(32),
                    word_bounded,
                    inside,
                    sym,
                    held,
                    seg_off,
                    lim,
                )
                segs = ["".join(map(chr, sym[seg_off[k] : seg_off[k + 1]])) for k in range(n)]
                if at == b:
                    got += [before + segs[0], *segs[1:]] if segs else []
                    break
                if n:
                    got += [before + segs[0], *segs[1:]]
                    before = ""
                if inside or not word_bounded:
                    # the open segment: its last two symbols are carried, as count_text carries
                    # max_n of them, the rest kept aside
                    open_seg = sym[seg_off[n] : held].copy()
                    before += "".join(map(chr, open_seg[:-2]))
                    held = min(2, open_seg.shape[0])
                    sym[:held] = open_seg[open_seg.shape[0] - held :]
                else:
                    held = 0
            assert got == want
        n_sym += seg_off[n]
        n_seg += n
    assert chunk.size[0] >= n_sym and chunk.size[1] >= n_seg


@settings(max_examples=100, deadline=None)
@given(
    words=st.lists(st.sampled_from(["a", "ab", "b", "é", "\ud800", "zz"]), max_size=5),
    tokens=st.lists(st.sampled_from(["a", "ab", "b", "é", "\ud800", "zz", "c"]), max_size=8),
)
def test_token_positions_are_the_first_equal_words(words, tokens):
    got = token_positions(words, *token_buffer(tokens))
    assert got.dtype == np.int64
    assert got.tolist() == [words.index(t) if t in words else -1 for t in tokens]
