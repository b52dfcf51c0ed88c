"""Timing on a quiet machine: wait for the load to fall, record it, repeat, report medians.

A 2-core machine shared with other work slows interpreted Python and scikit-learn code far more
than compiled kernels, so a speed ratio taken under load measures the load. Every benchmark
that prints a time or a ratio therefore

1. waits (:func:`wait_for_quiet`) until the 1-minute load average is below ``max_load``, or
   gives up after ``timeout`` seconds and says so in its output (the figure is then marked
   ``loaded``, never silently mixed with quiet ones);
2. runs each competitor and stylo ``repeats`` times, alternating them, so a load change hits
   both (:func:`alternate`);
3. reports the median with the min-max spread (:func:`spread`), and the load average before
   and after (:class:`LoadRecord`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["LoadRecord", "add_arguments", "alternate", "repeated", "spread", "wait_for_quiet"]


def _load() -> float:
    return float(os.getloadavg()[0])


def wait_for_quiet(
    max_load: float = 0.5, timeout: float = 900.0, poll: float = 5.0, stream=sys.stderr
) -> bool:
    """Block until the 1-minute load average is below ``max_load``; False if ``timeout``
    seconds passed first (the caller marks its figures as taken under load)."""
    if max_load <= 0 or timeout < 0 or poll <= 0:
        raise ValueError(
            f"need max_load > 0, timeout >= 0, poll > 0; got {max_load}, {timeout}, {poll}"
        )
    start = time.monotonic()
    told = False
    while (load := _load()) >= max_load:
        if time.monotonic() - start >= timeout:
            print(f"quiet: load {load:.2f} still >= {max_load} after {timeout:.0f} s", file=stream)
            return False
        if not told:
            print(f"quiet: waiting for load {load:.2f} to fall below {max_load}", file=stream)
            told = True
        time.sleep(poll)
    return True


@dataclass
class LoadRecord:
    """The load average when a measurement started and ended, and whether it waited for quiet
    successfully; ``label()`` is the text printed beside the figures."""

    quiet: bool
    before: float | None = None
    after: float | None = None

    def __post_init__(self):
        if self.before is None:
            self.before = _load()

    def close(self) -> LoadRecord:
        self.after = _load()
        return self

    def label(self) -> str:
        after = "?" if self.after is None else f"{self.after:.2f}"
        state = "quiet" if self.quiet else "LOADED"
        return f"{state}: load average {self.before:.2f} before, {after} after"


def alternate(runs: Mapping[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """Each callable (returning the seconds it measured) ``repeats`` times, round-robin, so
    that a change of load during the benchmark reaches every contender alike."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(float(run()))
    return times


def repeated(call: Callable[[], dict], repeats: int, seconds: str) -> tuple[list[dict], dict]:
    """``call()`` ``repeats`` times, one contender alone: the rows it returned, and the
    :func:`spread` of their ``seconds`` entries."""
    rows: list[dict] = []

    def once() -> float:
        rows.append(call())
        return rows[-1][seconds]

    return rows, spread(alternate({"run": once}, repeats)["run"])


def spread(seconds: list[float]) -> dict[str, float]:
    """Median, min and max of repeated timings (seconds)."""
    if not seconds:
        raise ValueError("no timings")
    a = np.asarray(seconds, dtype=np.float64)
    return {
        "median": float(np.median(a)),
        "min": float(a.min()),
        "max": float(a.max()),
        "runs": len(a),
    }


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """``--repeats``, ``--max-load`` and ``--quiet-timeout`` for a benchmark's command line."""
    ap.add_argument(
        "--repeats", type=int, default=3, help="runs of each contender (median reported)"
    )
    ap.add_argument(
        "--max-load",
        type=float,
        default=0.5,
        help="wait until the 1-min load average is below this",
    )
    ap.add_argument(
        "--quiet-timeout",
        type=float,
        default=900.0,
        help="seconds to wait for quiet before measuring anyway (figures marked LOADED)",
    )
