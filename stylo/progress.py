"""Progress inside one long computation, told to whoever runs it.

A method with a long loop (General Impostors' problems, an attributor's problems, a language
model's calls) calls :func:`advance` as it goes; by default nothing listens and the call costs
a global lookup. A runner that wants to show it installs a listener with :func:`listening`
(the grid runner's workers write it where the progress bar reads it). Listeners see
``(stage, done, total)``: a short name of the loop, units finished, units in all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["advance", "listening"]

Listener = Callable[[str, int, int], None]

_listener: Listener | None = None


def advance(stage: str, done: int, total: int) -> None:
    """Tell the listener, if any, that ``done`` of ``total`` units of ``stage`` are finished.

    A stage of one unit says nothing a listener could show (a ranking's one model call per
    query would hide the queries' own count), so it is not passed on."""
    if _listener is not None and total > 1:
        _listener(stage, int(done), int(total))


@contextmanager
def listening(listener: Listener, every: float = 0.5) -> Iterator[None]:
    """Send :func:`advance` calls to ``listener`` while the block runs, at most one every
    ``every`` seconds (and always the call that finishes a stage), so a tight loop does not
    pay for the listener's I/O."""
    global _listener
    last = [-float("inf")]

    def throttled(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= every:
            last[0] = now
            listener(stage, done, total)

    previous, _listener = _listener, throttled
    try:
        yield
    finally:
        _listener = previous
