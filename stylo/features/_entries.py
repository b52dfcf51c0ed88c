"""The entry store: (document, n-gram) entries of all chunks in one lazily backed memory map,
which becomes the CSR matrix's ``indices`` and ``data`` without a copy."""

from __future__ import annotations

import mmap
import sys

import numpy as np

from stylo.features._columns import move_left

_PIECE = 1 << 22  # entries moved between two releases of memory (48 MB)
# Linux's value; Python's mmap module does not name it
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)


class EntryStore:
    """The (document, n-gram) entries of all chunks: ids (int32) and counts (int64), chunk k
    in ``region(k)``, in one private anonymous memory map.

    Each chunk's region is sized for its worst case (``ngram_bound``); pages are backed only
    once written, so that costs address space, not memory. Chunk 0 of several fills its region
    from the end (``at_end``), so that its entries meet chunk 1's, which start its region;
    ``firsts[k]`` is where chunk k's entries begin. Once the chunks are moved together
    (``pack``; nothing moves for two chunks, unless entries were dropped), the pages outside
    the used entries are handed back to the system, and the entries become the CSR matrix's
    ``indices`` and ``data`` without a copy.
    """

    def __init__(self, bounds: list[int]):
        self.starts = np.concatenate([[0], np.cumsum(bounds, dtype=np.int64)])
        self.firsts = self.starts[:-1].copy()
        self.size = max(int(self.starts[-1]), 1)
        # POSIX; not reserving swap for the worst case. No MADV_HUGEPAGE: where transparent
        # huge pages are "madvise" with defrag "madvise" (this project's machines), faulting
        # them in compacts memory, and char 1-4 counting on 30,000 posts took 2.2-2.9 s with
        # the hint against 1.5 s without
        if hasattr(mmap, "MAP_PRIVATE"):
            self._map = mmap.mmap(-1, 12 * self.size, flags=mmap.MAP_PRIVATE | _MAP_NORESERVE)
        else:
            self._map = bytearray(12 * self.size)
        self.counts = np.frombuffer(self._map, dtype=np.int64, count=self.size)
        self.ids = np.frombuffer(self._map, dtype=np.int32, count=self.size, offset=8 * self.size)

    def at_end(self, k: int) -> bool:
        return k == 0 and len(self.firsts) > 1

    def region(self, k: int):
        a, b = self.starts[k], self.starts[k + 1]
        return self.ids[a:b], self.counts[a:b]

    def used(self, k: int, nnz: int):
        """Record that chunk k wrote ``nnz`` entries; return them (views)."""
        ids, counts = self.region(k)
        first = ids.shape[0] - nnz if self.at_end(k) else 0
        self.firsts[k] = self.starts[k] + first
        return ids[first : first + nnz], counts[first : first + nnz]

    def pack(self, sizes: list[int], map_parallel, n_pieces: int) -> int:
        """Move chunk k's first ``sizes[k]`` entries right after chunk k - 1's and release the
        memory outside them; return their total."""
        total = sum(sizes)
        at = int(self.firsts[0])
        end = at + total
        for k, n in enumerate(sizes):
            src = int(self.firsts[k])
            if src != at:
                # chunk by chunk: a chunk's destination may overlap the previous one's source;
                # pieces of one chunk run at once only when its source and destination are
                # apart, and a piece gives its source back as soon as it has moved
                apart = src - at >= n
                pieces = max(n_pieces if apart else 1, -(-n // _PIECE))
                cuts = np.linspace(0, n, pieces + 1).astype(np.int64)
                moves = [
                    (src + a, at + a, b - a)
                    for a, b in zip(cuts[:-1], cuts[1:], strict=True)
                    if b > a
                ]
                jobs = [[m] for m in moves] if apart else [moves]
                map_parallel(lambda job: self._move(job, end), jobs)
            at += n
        self._release(0, int(self.firsts[0]))
        self._release(end, self.size)
        return total

    def _move(self, moves, end):
        """Apply the ``(src, dst, n)`` moves in order; release sources beyond ``end``."""
        for src, dst, n in moves:
            move_left(self.ids, src, dst, n)
            move_left(self.counts, src, dst, n)
            self._release(max(src, end), src + n)

    def _release(self, first: int, end: int):
        """Hand back the whole pages of entries ``first:end`` of both arrays."""
        for offset, item in ((0, 8), (8 * self.size, 4)):
            a = -(-(offset + first * item) // mmap.PAGESIZE) * mmap.PAGESIZE
            b = (offset + end * item) // mmap.PAGESIZE * mmap.PAGESIZE
            if b > a and hasattr(self._map, "madvise"):
                self._map.madvise(mmap.MADV_DONTNEED, a, b - a)

    def packed(self, total: int):
        """``(ids, counts)``: the ``total`` packed entries, as arrays of exactly that length
        (so that scipy, seeing no much larger base, keeps them without a copy)."""
        first = int(self.firsts[0])
        return (
            np.frombuffer(self._map, dtype=np.int32, count=total, offset=8 * self.size + 4 * first),
            np.frombuffer(self._map, dtype=np.int64, count=total, offset=8 * first),
        )
