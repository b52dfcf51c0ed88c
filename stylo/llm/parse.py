"""Reading a model's answer robustly: JSON when there is some, a narrow free-text fallback
when not, and an explicit reason whenever the answer cannot be used.

Every parser returns a :class:`Parsed` with ``status`` ``ok``, ``unparseable`` (no answer found)
or ``invalid`` (an answer, but not an allowed one: an unknown candidate, a repeated candidate,
a value of the wrong type). Callers turn anything but ``ok`` into an abstention.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Parsed", "extract_json", "parse_verdict", "parse_choice", "parse_ranking"]

OK, UNPARSEABLE, INVALID = "ok", "unparseable", "invalid"

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


@dataclass(frozen=True)
class Parsed:
    """A parsed answer (``value``; None unless ``status == "ok"``) and why it is unusable."""

    value: Any
    status: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


def extract_json(text: str, key: str) -> dict | None:
    """The first JSON object in ``text`` that has ``key`` (inside code fences or not)."""
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for src in sources:
        for start in (m.start() for m in re.finditer(r"\{", src)):
            try:
                obj, _ = decoder.raw_decode(src, start)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and key in obj:
                return obj
    return None


def _field(text: str, key: str) -> tuple[bool, Any]:
    obj = extract_json(text, key)
    return (True, obj[key]) if obj is not None else (False, None)


_BOOL_WORDS = {
    "true": True,
    "yes": True,
    "same": True,
    "false": False,
    "no": False,
    "different": False,
}


def parse_verdict(text: str) -> Parsed:
    """``{"same": true|false}`` -> bool (also "yes"/"no" as the first word of a bare answer)."""
    found, value = _field(text, "same")
    if not found:
        m = re.search(r'"same"\s*:\s*"?(true|false|yes|no)\b', text, re.I) or re.match(
            r'\s*"?(true|false|yes|no)\b', text, re.I
        )
        if m is None:
            return Parsed(None, UNPARSEABLE, "no same-author verdict found")
        return Parsed(_BOOL_WORDS[m.group(1).lower()], OK)
    if isinstance(value, bool):
        return Parsed(value, OK)
    if isinstance(value, str) and value.strip().lower() in _BOOL_WORDS:
        return Parsed(_BOOL_WORDS[value.strip().lower()], OK)
    return Parsed(None, INVALID, f"'same' is {value!r}, not a boolean")


def _candidate_number(value) -> int | None:
    """1-based candidate number from 3, "3", "Candidate 3", "text 3"; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(?:candidate|text)?\s*#?\s*(\d+)\s*", value, re.I)
        return int(m.group(1)) if m else None
    return None


def parse_choice(text: str, n: int = 2) -> Parsed:
    """``{"answer": k}`` with 1 <= k <= n -> the 0-based candidate index."""
    found, value = _field(text, "answer")
    if not found:
        m = re.search(r'"answer"\s*:\s*"?(?:candidate\s*)?(\d+)', text, re.I) or re.match(
            r"\s*(?:candidate\s*)?(\d+)\b", text, re.I
        )
        if m is None:
            return Parsed(None, UNPARSEABLE, "no candidate number found")
        value = int(m.group(1))
    k = _candidate_number(value)
    if k is None:
        return Parsed(None, INVALID, f"'answer' is {value!r}, not a candidate number")
    if not 1 <= k <= n:
        return Parsed(None, INVALID, f"candidate {k} does not exist (1..{n})")
    return Parsed(k - 1, OK)


def parse_ranking(text: str, n: int) -> Parsed:
    """``{"ranking": [k1, k2, ...]}`` -> 0-based indices, most likely first.

    A ranking may name fewer than ``n`` candidates (a truncated answer is read up to its last
    complete number); an unknown or repeated candidate makes the whole answer invalid.
    """
    found, value = _field(text, "ranking")
    if not found:
        m = re.search(r'"ranking"\s*:\s*\[([^\]]*)', text, re.I)
        if m is None:
            return Parsed(None, UNPARSEABLE, "no ranking found")
        # a cut-off list: keep the items that were completed (followed by a comma or bracket)
        body = m.group(1)
        complete = body if m.end() < len(text) else body[: body.rfind(",") + 1]
        value = [x for x in (s.strip().strip('"') for s in complete.split(",")) if x]
    if not isinstance(value, list) or not value:
        return Parsed(None, INVALID, f"'ranking' is {value!r}, not a non-empty list")
    order = []
    for item in value:
        k = _candidate_number(item)
        if k is None:
            return Parsed(None, INVALID, f"ranking item {item!r} is not a candidate number")
        if not 1 <= k <= n:
            return Parsed(None, INVALID, f"candidate {k} does not exist (1..{n})")
        if k - 1 in order:
            return Parsed(None, INVALID, f"candidate {k} is ranked twice")
        order.append(k - 1)
    return Parsed(order, OK)
