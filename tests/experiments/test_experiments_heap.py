"""experiments.heap: a process that runs cells keeps the memory it frees."""

import subprocess
import sys
import textwrap

import pytest

from experiments import heap

_PROBE = textwrap.dedent(
    """
    import sys
    import numpy as np
    from experiments.heap import keep_freed_memory

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    kept = keep_freed_memory() if sys.argv[1] == "keep" else False
    before = rss_mb()
    block = np.ones(200 * 2**20 // 8)  # 200 MB, every page touched
    del block
    print(kept, round(rss_mb() - before))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_blocks_stay_in_the_process_only_when_asked():
    def probe(mode):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
        )
        kept, grown = out.stdout.split()
        return kept == "True", int(grown)

    assert probe("default") == (False, pytest.approx(0, abs=20))  # unmapped when freed
    kept, grown = probe("keep")
    if not kept:
        pytest.skip("this C library has no glibc mallopt")
    assert grown >= 190  # the 200 MB stayed for the next cell to reuse


def test_no_mallopt_means_no_change(monkeypatch):
    def no_libc(*args, **kwargs):
        raise OSError("no C library here")

    monkeypatch.setattr(heap.ctypes, "CDLL", no_libc)
    assert heap.keep_freed_memory() is False
