"""AIDBench's prompt families for one-to-one, one-to-two and one-to-many authorship questions.

AIDBench (Wen et al., arXiv 2411.13226) asks a model to judge authorship from three kinds of
evidence: writing style, linguistic features, and topic and content. Its families are the
*general* prompt (all three), the *topic-ignored* prompt (style and linguistic features, and an
explicit instruction to disregard differences of topic and content), and three ablations that
each drop one kind of evidence. The wording below is stylo's own, written from those
descriptions; each prompt asks for a JSON answer whose schema is given with it, so servers
that support structured output can enforce it.
"""

from __future__ import annotations

__all__ = ["FAMILIES", "Prompt", "verify_prompt", "choose_prompt", "rank_prompt"]

_STYLE = (
    "writing style: tone, formality, sentence length and structure, paragraphing, "
    "punctuation habits and how sentences open and close"
)
_LINGUISTIC = (
    "linguistic features: function words, contractions, phrasal and modal verbs, "
    "favourite or rare words, spelling, typos, capitalisation and abbreviations"
)
_TOPIC = (
    "topic and content: the subjects discussed, the knowledge and opinions shown, "
    "and recurring themes or references"
)
_IGNORE_TOPIC = (
    "The texts may be about different subjects: ignore any difference in topic "
    "and content and judge only how they are written."
)

#: family name -> (kinds of evidence to weigh, extra instruction)
FAMILIES: dict[str, tuple[tuple[str, ...], str]] = {
    "general": ((_STYLE, _LINGUISTIC, _TOPIC), ""),
    "topic_ignored": ((_STYLE, _LINGUISTIC), _IGNORE_TOPIC),
    "no_linguistic": ((_STYLE, _TOPIC), ""),
    "no_style": ((_LINGUISTIC, _TOPIC), ""),
    "no_topic": ((_STYLE, _LINGUISTIC), ""),
}

_SYSTEM = "You are an expert in forensic linguistics and authorship analysis."


class Prompt(dict):
    """``messages`` for the chat call and the JSON ``schema`` of the expected answer."""

    @property
    def messages(self) -> list[dict]:
        return self["messages"]

    @property
    def schema(self) -> dict:
        return self["schema"]


def _criteria(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"unknown prompt family {family!r}; choose from {sorted(FAMILIES)}")
    kinds, extra = FAMILIES[family]
    lines = "\n".join(f"- {k}" for k in kinds)
    return f"Compare the texts on:\n{lines}\n{extra}".rstrip() + "\n"


def _schema(answer_key: str, answer: dict, explain: bool) -> dict:
    props, required = {}, []
    if explain:
        props["analysis"] = {"type": "string"}
        required.append("analysis")
    props[answer_key] = answer
    required.append(answer_key)
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def _format_line(schema: dict) -> str:
    keys = list(schema["properties"])
    example = {
        "analysis": '"<a few sentences>"',
        "same": "true or false",
        "answer": "<candidate number>",
        "ranking": "[<candidate numbers, most likely first>]",
    }
    inner = ", ".join(f'"{k}": {example[k]}' for k in keys)
    return f"Answer with JSON only, in the form {{{inner}}}."


def _message(task: str, family: str, body: str, schema: dict) -> Prompt:
    user = f"{task}\n{_criteria(family)}\n{body}\n\n{_format_line(schema)}"
    return Prompt(
        messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}],
        schema=schema,
    )


def verify_prompt(
    text_a: str, text_b: str, family: str = "general", explain: bool = False
) -> Prompt:
    """One-to-one: were ``text_a`` and ``text_b`` written by the same author?"""
    schema = _schema("same", {"type": "boolean"}, explain)
    body = f'Text 1:\n"""\n{text_a}\n"""\n\nText 2:\n"""\n{text_b}\n"""'
    return _message(
        "Decide whether the two texts below were written by the same author.", family, body, schema
    )


def _candidates(candidates: list[str]) -> str:
    return "\n\n".join(f'Candidate {i}:\n"""\n{c}\n"""' for i, c in enumerate(candidates, start=1))


def choose_prompt(
    query: str, candidate_a: str, candidate_b: str, family: str = "general", explain: bool = False
) -> Prompt:
    """One-to-two: which of two candidates shares the query text's author (1 or 2)?"""
    schema = _schema("answer", {"type": "integer", "enum": [1, 2]}, explain)
    body = f'Query text:\n"""\n{query}\n"""\n\n{_candidates([candidate_a, candidate_b])}'
    return _message(
        "Exactly one of the two candidate texts was written by the author of the "
        "query text. Which one?",
        family,
        body,
        schema,
    )


def rank_prompt(
    query: str, candidates: list[str], family: str = "general", explain: bool = False
) -> Prompt:
    """One-to-many: rank the candidates (numbered from 1) by how likely each shares the query
    text's author."""
    n = len(candidates)
    schema = _schema(
        "ranking",
        {
            "type": "array",
            "minItems": 1,
            "maxItems": n,
            "items": {"type": "integer", "enum": list(range(1, n + 1))},
        },
        explain,
    )
    body = f'Query text:\n"""\n{query}\n"""\n\n{_candidates(candidates)}'
    return _message(
        f"Rank the {n} candidate texts by how likely each was written by the author "
        f"of the query text, most likely first. Use each candidate number once.",
        family,
        body,
        schema,
    )
