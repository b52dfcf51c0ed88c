"""The ranking study of benchmarks/choose_ensemble weighs distinct stacks, whatever rank bases
the registry gives ``ensemble`` (once LambdaG was registered as its rank base, the study's
"without" candidates had silently included it)."""

from baselines.registry import make
from benchmarks.choose_ensemble import _PairwiseRanker, _ranking_candidates


def _rank_base_names(stack) -> list[str]:
    return [type(b).__name__ for b in stack.rank_bases]


def test_ranking_candidates_differ_in_rank_bases_and_meta_model():
    got = _ranking_candidates()
    assert _rank_base_names(got["bases"]) == []
    assert _rank_base_names(got["pairwise"]) == []
    assert _rank_base_names(got["bases + lambdag"]) == ["LambdaG"]
    assert _rank_base_names(got["pairwise + lambdag"]) == ["LambdaG"]
    assert isinstance(got["pairwise"], _PairwiseRanker)
    assert not isinstance(got["bases"], _PairwiseRanker)
    # the registered stack's bases in every candidate
    registered = make("ensemble", 0)
    names = [type(b).__name__ for b in registered.bases]
    for stack in got.values():
        assert [type(b).__name__ for b in stack.bases] == names
