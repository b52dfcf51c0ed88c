"""Every registered method has a real-data regression test: a method added to the registry
without one fails here (no corpus needed), so the pinned slices cannot silently fall behind."""

from __future__ import annotations

from test_real_data_attribution import REFERENCE as ATTRIBUTORS
from test_real_data_neural import REFERENCE as NEURAL
from test_real_data_rankers import REFERENCE as RANKERS
from test_real_data_verifiers import IMPOSTORS
from test_real_data_verifiers import REFERENCE as VERIFIERS

from baselines.registry import methods


def test_every_registered_method_has_a_real_data_test():
    pinned = set(VERIFIERS) | {"impostors"} | {m for m, _ in ATTRIBUTORS} | set(RANKERS)
    pinned |= set(NEURAL)
    assert IMPOSTORS  # impostors is pinned by its own test, within its seed spread
    assert sorted(set(methods()) - pinned) == [], "registered methods without a real-data test"
    assert sorted(pinned - set(methods())) == [], "real-data tests of unregistered methods"
