"""The sqlite response cache: keys, round trips, threads, and a writer killed mid-run."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

from stylo.llm import ResponseCache, request_key

REQ = {
    "messages": [{"role": "user", "content": "hi"}],
    "max_tokens": 8,
    "temperature": 0.0,
    "seed": 0,
    "json_schema": None,
}


def test_key_depends_on_backend_model_and_every_parameter():
    base = request_key("b", "m", REQ)
    assert request_key("b", "m", dict(REQ)) == base
    assert request_key("other", "m", REQ) != base
    assert request_key("b", "m2", REQ) != base
    for field, value in [
        ("max_tokens", 9),
        ("temperature", 0.5),
        ("seed", 1),
        ("json_schema", {"type": "object"}),
        ("messages", [{"role": "user", "content": "hi!"}]),
    ]:
        assert request_key("b", "m", {**REQ, field: value}) != base, field


def test_round_trip_persists_across_connections(tmp_path):
    path = tmp_path / "sub" / "c.sqlite"
    c = ResponseCache(path)
    assert c.get("k") is None
    c.put("k", "b", "m", REQ, "answer \u00e9", "length", 12, 3, 0.25)
    c.close()
    got = ResponseCache(path).get("k")
    assert got == {
        "text": "answer \u00e9",
        "finish_reason": "length",
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "seconds": 0.25,
    }


def test_threads_share_one_cache(tmp_path):
    c = ResponseCache(tmp_path / "c.sqlite")

    def work(t):
        for i in range(25):
            c.put(f"{t}-{i}", "b", "m", REQ, f"text {t} {i}", "stop", i, 1, 0.0)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(c) == 100 and c.integrity_ok()
    assert c.get("3-24")["text"] == "text 3 24"


_WRITER = """
import sys
from stylo.llm.cache import ResponseCache
c = ResponseCache(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    c.put(f"k{i}", "b", "m", {"i": i}, "x" * 5000 + str(i), "stop", i, i, 0.0)
    i += 1
    if i == 50:
        print("stored 50", flush=True)  # rows 0-49 are committed; writing goes on
"""


def test_writer_killed_mid_run_leaves_a_consistent_cache(tmp_path):
    path = tmp_path / "c.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        # killed once it says 50 rows are stored, while it writes more: no clock involved
        assert proc.stdout.readline().strip() == "stored 50"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    c = ResponseCache(path)
    assert c.integrity_ok()
    n = len(c)
    assert n >= 50
    # every row that exists is complete
    for i in range(n):
        got = c.get(f"k{i}")
        assert got is not None and got["text"] == "x" * 5000 + str(i)
        assert got["prompt_tokens"] == i
    assert c.get(f"k{n}") is None
