"""The method registry: listing it is cheap (no method module is imported), entries are
validated, and registered parts are built afresh for every instance."""

import json
import subprocess
import sys

import pytest

from baselines import registry
from baselines.registry import Construct, MethodSpec

#: modules a listing must not import: the methods' own code and the heavy libraries behind it
HEAVY = [
    "baselines.compression",
    "baselines.embedding",
    "baselines.bert_pair",
    "baselines.siamese_pair",
    "baselines.llm",
    "baselines.rag",
    "baselines.calibration",
    "baselines.impostors",
    "torch",
    "transformers",
    "llama_cpp",
    "sentence_transformers",
    "zstandard",
]


def test_importing_and_listing_the_registry_imports_no_method_module():
    code = (
        "import json, sys\n"
        "import baselines.__main__ as cli\n"
        "from baselines import registry\n"
        "listing = cli._method_list()\n"
        "rows = [(n, s.kind, s.extras, s.description) for n, s in registry.METHODS.items()]\n"
        "assert all(n in listing for n in registry.methods()) and rows\n"
        "print(json.dumps(sorted(m for m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not [m for m in HEAVY if m in loaded]
    # the check itself works: making a method does import its module
    code = (
        "import json, sys\nfrom baselines import registry\nregistry.make('ppm-cal')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert {"baselines.compression", "baselines.calibration"} <= set(json.loads(out.stdout))


def test_entries_are_validated():
    with pytest.raises(ValueError, match="kind must be one of"):
        MethodSpec(lambda seed, o: None, kind="fast")
    with pytest.raises(ValueError, match=r"unknown extra\(s\) \['gpu'\]"):
        MethodSpec(lambda seed, o: None, extras=("gpu",))
    with pytest.raises(ValueError, match="target must be 'module:Class'"):
        Construct("baselines.naive.NaiveDistance")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("naive", "baselines.naive:NaiveDistance", "again")
    with pytest.raises(KeyError, match="unknown method 'nope'"):
        registry.make("nope")


def test_parts_are_built_for_every_instance_and_seeds_reach_the_outer_estimator():
    a, b = registry.make("ppm-cal", seed=3), registry.make("ppm-cal", seed=3)
    assert a.verifier is not b.verifier and a.verifier.get_params() == b.verifier.get_params()
    assert a.verifier.measure == "ppm"
    assert registry.make("impostors", seed=5).random_state == 5
    assert registry.make("impostors").random_state == registry.make("impostors", 0).random_state


def _compression_measures(value) -> set[str]:
    """The measures of every CompressionVerifier in a built method, its parts included."""
    from baselines.compression import CompressionVerifier

    if isinstance(value, CompressionVerifier):
        return {value.measure}
    if isinstance(value, (tuple, list)):
        return set().union(*map(_compression_measures, value))
    if hasattr(value, "get_params"):
        return set().union(*map(_compression_measures, value.get_params(deep=False).values()))
    return set()


def test_methods_measuring_through_the_compression_memo_say_which_memo_they_share():
    from baselines.compression import memo_family

    shared = {}
    for name, spec in registry.METHODS.items():
        if spec.needs_server:
            continue
        families = {memo_family(m) for m in _compression_measures(registry.make(name))}
        assert len(families) <= 1 and spec.shares == next(iter(families), None), name
        shared.setdefault(spec.shares, set()).add(name)
    assert {"cdm", "cdm-cal", "ncd", "ncd-cal", "ensemble"} <= shared["zstd"]
    assert shared["ppm"] == {"ppm", "ppm-cal"}


def test_prompt_family_is_read_without_building_the_method():
    assert registry.prompt_family("llm-prompt") == "general"
    assert registry.prompt_family("rag-embedding-llm") == "topic_ignored"
    assert registry.prompt_family("naive") is None


def test_neural_methods_need_the_neural_extra(monkeypatch):
    from baselines.bert_pair import BertPair
    from baselines.siamese_pair import SiamesePair

    assert isinstance(registry.make("bert-pair", 7), BertPair)
    assert registry.make("siamese-pair", 7).random_state == 7
    assert isinstance(registry.make("siamese-pair"), SiamesePair)
    monkeypatch.setitem(registry.EXTRAS, "neural", ("no_such_module_xyz",))
    for name in ("bert-pair", "siamese-pair"):
        why = registry.unavailable(registry.spec(name), registry.DEFAULT_OPTIONS)
        assert why == "needs extra neural (pip install 'stylo[neural]')"
