"""The character alphabet the n-gram tests draw texts from."""

# letters with case quirks (İ lowers to two code points), combining marks (of Latin, Devanagari,
# Arabic, Brahmi beyond the BMP, and the kana voicing mark, which is in no word), whitespace of
# several kinds (tab, NBSP, em space, line separator), apostrophes, emoji with a modifier
__all__ = ["ALPHABET"]

ALPHABET = list("abcAB xyz.,;!?'’-_0123\t\n") + [
    "\u00a0",
    "\u2003",
    "\u2028",
    "é",
    "ß",
    "İ",
    "Σ",
    "\u0301",
    "😀",
    "👍",
    "\U0001f3fd",
    "中",
    "の",
    "。",
    "É",
    "Ω",
    "\u01c4",
    "ह",
    "\u093f",
    "\u064b",
    "\U00011001",
    "\u3099",
]
