"""The experiment grid: stable cell keys, expansion, skips and quick-size overrides."""

import pytest
from experiments_standins import ToyRanking, ToyVerification, toy_grid, toy_loader
from hypothesis import given
from hypothesis import strategies as st

from baselines.random_guess import RandomGuess
from baselines.registry import METHODS, MethodOptions, MethodSpec, unavailable
from experiments.cells import Cell, cell_key
from experiments.grid import (
    DatasetSpec,
    GridSpec,
    KindScope,
    _shape,
    expand,
    full_grid,
    quick_grid,
)
from experiments.suite import Suite
from stylo.corpus import PairSet

PROTOCOLS = {"toy_verification": ToyVerification(), "toy_ranking": ToyRanking()}

_json_scalars = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans(), st.none())


@given(st.dictionaries(st.text(min_size=1, max_size=4), _json_scalars, max_size=5))
def test_cell_key_ignores_key_order(setting):
    spec = {"dataset": "d", "setting": setting, "seed": 1}
    reordered = {"seed": 1, "setting": dict(reversed(list(setting.items()))), "dataset": "d"}
    assert cell_key(spec) == cell_key(reordered)
    assert len(cell_key(spec)) == 20


def test_cell_key_changes_with_any_field():
    base = Cell("d", {}, "p", {"n": 2}, "random", {}, 0)
    variants = [
        Cell("e", {}, "p", {"n": 2}, "random", {}, 0),
        Cell("d", {"split": "test"}, "p", {"n": 2}, "random", {}, 0),
        Cell("d", {}, "q", {"n": 2}, "random", {}, 0),
        Cell("d", {}, "p", {"n": 5}, "random", {}, 0),
        Cell("d", {}, "p", {"n": 2}, "other", {}, 0),
        Cell("d", {}, "p", {"n": 2}, "random", {"llm_model": "x"}, 0),
        Cell("d", {}, "p", {"n": 2}, "random", {}, 1),
    ]
    keys = {base.key, *(v.key for v in variants)}
    assert len(keys) == 1 + len(variants)
    # tuples and lists normalise to the same JSON
    assert (
        Cell("d", {}, "p", {"n": (1, 2)}, "random", {}, 0).key
        == Cell("d", {}, "p", {"n": [1, 2]}, "random", {}, 0).key
    )


def test_expand_counts_cells_and_reports_missing_datasets():
    grid = toy_grid("toy", "missing_one", seeds=[0, 1])
    exp = expand(grid, Suite(PROTOCOLS, toy_loader))
    # 2 protocols x 2 settings x 2 seeds x 1 method
    assert len(exp.cells) == 8
    assert len({c.key for c in exp.cells}) == 8
    assert any("missing_one" in s and "not available" in s for s in exp.skipped)
    # the cells of one task are adjacent, so a worker reuses the sampled task
    runs = [
        k
        for i, k in enumerate(c.task_key for c in exp.cells)
        if i == 0 or k != exp.cells[i - 1].task_key
    ]
    assert len(runs) == len(set(runs))


def test_protocol_dataset_restriction_and_protocol_filter():
    grid = toy_grid("toy", "toy2", protocol_datasets={"toy_ranking": ["toy2"]})
    exp = expand(grid, Suite(PROTOCOLS, toy_loader))
    assert {(c.dataset, c.protocol) for c in exp.cells} == {
        ("toy", "toy_verification"),
        ("toy2", "toy_verification"),
        ("toy2", "toy_ranking"),
    }
    grid.protocols = ["toy_ranking"]
    assert {c.protocol for c in expand(grid, Suite(PROTOCOLS, toy_loader)).cells} == {"toy_ranking"}


def test_protocol_params_rebuild_the_protocol_and_enter_the_key():
    plain = toy_grid(max_settings=1, protocols=["toy_verification"])
    small = toy_grid(
        max_settings=1,
        protocols=["toy_verification"],
        protocol_params={"toy_verification": {"n_pairs": 6}},
    )
    (a,) = expand(plain, Suite(PROTOCOLS, toy_loader)).cells
    (b,) = expand(small, Suite(PROTOCOLS, toy_loader)).cells
    assert a.setting == b.setting and a.key != b.key
    assert b.spec()["protocol_params"] == {"n_pairs": 6}
    proto = Suite(PROTOCOLS, toy_loader).protocol("toy_verification", b.protocol_params)
    assert proto.n_pairs == 6 and PROTOCOLS["toy_verification"].n_pairs == 20
    assert len(proto.sample(toy_loader("toy"), dict(b.setting), 0).y) == 6


def test_unknown_names_are_clear_errors():
    grid = GridSpec(datasets=[DatasetSpec("toy")], seeds=[0], methods=["nope"])
    with pytest.raises(ValueError, match="unknown method"):
        expand(grid, Suite(PROTOCOLS, toy_loader))
    grid = toy_grid(protocols=["nope"])
    with pytest.raises(ValueError, match="unknown protocol"):
        expand(grid, Suite(PROTOCOLS, toy_loader))


def test_hosted_llm_methods_need_url_and_model_and_key_on_them():
    methods = {
        "random": METHODS["random"],
        "hosted": MethodSpec(lambda seed, o: RandomGuess(seed), needs_server=True),
    }
    assert unavailable(methods["hosted"], MethodOptions()) == "needs --llm-base-url and --llm-model"
    grid = GridSpec(datasets=[DatasetSpec("toy")], seeds=[0], max_settings=1)
    exp = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods))
    assert {c.method for c in exp.cells} == {"random"}
    assert any("hosted" in s for s in exp.skipped)
    opts = MethodOptions(llm_base_url="http://127.0.0.1:9/v1", llm_model="m")
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods, options=opts)).cells
    hosted = [c for c in cells if c.method == "hosted"]
    assert hosted and all(
        c.method_options == {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m"}
        for c in hosted
    )


def test_kind_scopes_limit_slow_methods_to_their_protocols_datasets_and_seeds():
    methods = {
        "random": METHODS["random"],
        "slow": MethodSpec(lambda seed, o: RandomGuess(seed), kind="llm"),
    }
    grid = GridSpec(
        datasets=[DatasetSpec("toy")],
        seeds=[0, 1, 2],
        methods=["random", "slow"],
        kind_scopes={"llm": KindScope({"toy_ranking": ["toy"]}, n_seeds=1)},
    )
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods)).cells
    slow = [c for c in cells if c.method == "slow"]
    fast = [c for c in cells if c.method == "random"]
    assert {(c.protocol, c.seed) for c in slow} == {("toy_ranking", 0)}
    assert len(slow) == 2  # both settings of toy_ranking, first seed only
    assert {(c.protocol, c.seed) for c in fast} == {(p, s) for p in PROTOCOLS for s in (0, 1, 2)}
    grid.kind_scopes = {"llm": KindScope({"toy_ranking": ["another"]})}
    assert not [
        c
        for c in expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods)).cells
        if c.method == "slow"
    ]
    grid.kind_scopes = {
        "llm": KindScope({"toy_ranking": ["toy"]}, settings={"toy_ranking": [{"n_authors": 3}]})
    }
    slow = [
        c
        for c in expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods)).cells
        if c.method == "slow"
    ]
    assert {c.setting["n_authors"] for c in slow} == {3} and len(slow) == 3  # three seeds
    grid.kind_scopes = {
        "llm": KindScope(
            {"toy_verification": ["toy"]},
            n_seeds=1,
            protocol_params={"toy_verification": {"n_pairs": 4}},
        )
    }
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods)).cells
    slow = [c for c in cells if c.method == "slow"]
    assert slow and all(c.protocol_params == {"n_pairs": 4} for c in slow)
    assert all(c.protocol_params == {} for c in cells if c.method == "random")
    assert not {c.task_key for c in slow} & {c.task_key for c in cells if c.method == "random"}


def test_quick_grid_is_a_subset_of_full_grid():
    quick, full = quick_grid(3), full_grid(3)
    assert quick.seeds == [3] and full.seeds == [3, 4, 5]
    assert {d.name for d in quick.datasets} <= {d.name for d in full.datasets}
    assert quick.max_settings == 1 and full.max_settings is None


def test_maskings_for_chosen_methods_and_one_seed_for_fixed_protocols():
    methods = {"random": METHODS["random"], "other": METHODS["random"]}
    maskings = {"mask": lambda verifier: verifier}
    grid = toy_grid(
        seeds=(0, 1),
        methods=("random", "other"),
        maskings=["mask"],
        masking_protocols=["toy_verification"],
        masking_methods=["other"],
        single_seed_protocols=["toy_ranking"],
    )
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods, maskings=maskings)).cells
    masked = {(c.protocol, c.method) for c in cells if c.masking == "mask"}
    assert masked == {("toy_verification", "other")}
    assert {c.seed for c in cells if c.protocol == "toy_ranking"} == {0}
    assert {c.seed for c in cells if c.protocol == "toy_verification"} == {0, 1}
    # 2 settings x 2 seeds x (random + other + masked other), and 2 settings x 1 seed x 2
    assert len(cells) == 2 * 2 * 3 + 2 * 2


def test_method_params_enter_the_key_and_reach_the_verifier():
    plain = toy_grid(max_settings=1, protocols=["toy_verification"], methods=("impostors",))
    tuned = toy_grid(
        max_settings=1,
        protocols=["toy_verification"],
        methods=("impostors",),
        method_params={"impostors": {"n_iter": 7}},
    )
    (a,) = expand(plain, Suite(PROTOCOLS, toy_loader)).cells
    (b,) = expand(tuned, Suite(PROTOCOLS, toy_loader)).cells
    assert "method_params" not in a.spec() and b.spec()["method_params"] == {"n_iter": 7}
    assert a.key != b.key and a.task_key == b.task_key
    suite = Suite(PROTOCOLS, toy_loader)
    assert suite.method(a).n_iter == 50 and suite.method(b).n_iter == 7
    tuned.method_params = {"nope": {"n_iter": 7}}
    with pytest.raises(ValueError, match="unknown method"):
        expand(tuned, Suite(PROTOCOLS, toy_loader))


def test_attribution_methods_run_only_on_attribution_protocols():
    """svm-attribution (kind "attribution") is scoped to the attribution protocols (PAN18/19
    cross-domain, closed set) in both grids."""
    for grid in (full_grid(), quick_grid()):
        scope = grid.kind_scopes["attribution"]
        assert set(scope.protocol_datasets) == {"cdaa_attribution", "closed_attribution"}
    full = full_grid()
    assert "pan19_cdaa" in full.protocol_datasets["cdaa_attribution"]
    assert METHODS["svm-attribution"].kind == "attribution"


def test_a_method_scope_wins_over_its_kind_scope():
    methods = {
        "random": MethodSpec(lambda seed, o: RandomGuess(seed), kind="llm"),
        "other": MethodSpec(lambda seed, o: RandomGuess(seed), kind="llm"),
    }
    grid = GridSpec(
        datasets=[DatasetSpec("d1"), DatasetSpec("d2")],
        seeds=[0, 1],
        kind_scopes={
            "llm": KindScope({"toy_verification": ["d1"]}, n_seeds=1),
            "other": KindScope({"toy_verification": ["d2"]}),
        },
    )
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods)).cells
    assert {(c.method, c.dataset, c.seed) for c in cells} == {
        ("random", "d1", 0),
        ("other", "d2", 0),
        ("other", "d2", 1),
    }


def test_a_scope_with_maskings_runs_its_methods_with_those_only():
    methods = {
        "random": METHODS["random"],
        "net": MethodSpec(lambda seed, o: RandomGuess(seed), kind="neural"),
    }
    maskings = {"mask": lambda verifier: verifier, "other": lambda verifier: verifier}
    grid = toy_grid(
        methods=("random", "net"),
        maskings=["mask", "other"],
        masking_protocols=["toy_verification"],
        masking_methods=["random"],
        kind_scopes={
            "neural": KindScope(
                {"toy_verification": ["toy"], "toy_ranking": ["toy"]}, maskings=("other",)
            )
        },
    )
    suite = Suite(PROTOCOLS, toy_loader, methods=methods, maskings=maskings)
    cells = expand(grid, suite).cells
    masks = {(c.method, c.protocol, c.masking) for c in cells}
    # the scope's masking on the masking protocol only, though masking_methods leaves it out
    assert {m for n, p, m in masks if n == "net" and p == "toy_verification"} == {None, "other"}
    assert {m for n, p, m in masks if n == "net" and p == "toy_ranking"} == {None}
    assert {m for n, p, m in masks if n == "random" and p == "toy_verification"} == {
        None,
        "mask",
        "other",
    }


def test_neural_methods_run_on_the_rethinking_splits_with_entity_masking_only():
    full = full_grid()
    for name in ("bert-pair", "siamese-pair"):
        assert METHODS[name].kind == "neural" and METHODS[name].extras == ("neural",)
    neural, siamese = full.kind_scopes["neural"], full.kind_scopes["siamese-pair"]
    assert neural.maskings == siamese.maskings == ("entity_masking",)
    assert neural.protocol_datasets == {"rethinking_av": ["pan19_cdaa", "guardian", "blog"]}
    assert neural.n_seeds == siamese.n_seeds == 1
    assert siamese.protocol_datasets["aidbench_one_to_many"] == ["mlpapers"]
    assert siamese.settings == full.kind_scopes["embedding"].settings
    quick = quick_grid()
    assert quick.kind_scopes["neural"].protocol_datasets == {"rethinking_av": ["guardian"]}
    assert quick.method_params["bert-pair"]["max_tokens"] <= 64


@pytest.mark.parametrize("quick", [True, False])
def test_named_datasets_keep_each_kinds_protocols_seeds_and_sizes(quick):
    from experiments.run_all import _grid, build_parser

    argv = ["--datasets", "mine,other", *(["--quick"] if quick else [])]
    grid = _grid(build_parser().parse_args(argv), METHODS)
    reference = quick_grid() if quick else full_grid()
    assert [d.name for d in grid.datasets] == ["mine", "other"]
    assert grid.protocol_datasets == {}
    assert set(grid.kind_scopes) == set(reference.kind_scopes)
    for kind, scope in grid.kind_scopes.items():
        own = reference.kind_scopes[kind]
        assert scope.protocol_datasets == {p: ["mine", "other"] for p in own.protocol_datasets}
        assert scope.protocol_params == own.protocol_params
        assert (scope.n_seeds, scope.maskings) == (own.n_seeds, own.maskings)
        assert scope.settings.keys() == own.settings.keys()
    if quick:  # the local LLM's quick one-to-two: 2 triplets, not the classical 40
        llm = grid.kind_scopes["llm"]
        assert llm.protocol_params["aidbench_one_to_two"]["n_triplets"] == 2
        assert grid.protocol_params["aidbench_one_to_two"]["n_triplets"] == 40


class _NeverApplies(ToyVerification):
    name = "toy_never"
    needs = "a corpus of poems"

    def settings(self, data) -> list[dict]:
        return []


def test_a_named_dataset_is_told_which_protocols_do_not_apply_and_what_they_need():
    protocols = {**PROTOCOLS, "toy_never": _NeverApplies()}
    exp = expand(toy_grid("toy"), Suite(protocols, toy_loader))  # every protocol: named datasets
    never = [s for s in exp.skipped if s.startswith("toy_never on toy")]
    assert never == [
        "toy_never on toy: does not apply to it (6 authors, the most prolific with 6 texts); "
        "it needs a corpus of poems"
    ]
    assert {c.protocol for c in exp.cells} == {"toy_verification", "toy_ranking"}
    # the reference grid names its protocols' datasets itself: no such line there
    grid = toy_grid("toy", protocol_datasets={"toy_never": ["toy"], "toy_ranking": ["toy"]})
    skipped = expand(grid, Suite(protocols, toy_loader)).skipped
    assert not any("does not apply" in s for s in skipped)


def test_a_scope_on_named_datasets_keeps_its_slice_of_settings_without_first_author():
    methods = {"slow": MethodSpec(lambda seed, o: RandomGuess(seed), kind="llm")}
    scope = KindScope(
        {"toy_ranking": ["elsewhere"]},
        settings={"toy_ranking": [{"n_authors": 2, "first_author": True}]},
    )
    grid = GridSpec(datasets=[DatasetSpec("toy")], seeds=[0], methods=["slow"])
    grid.kind_scopes = {"llm": scope.on(["toy"])}
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, methods=methods)).cells
    # the toy corpus has no author lists: its settings name no first_author
    assert [(c.protocol, c.setting) for c in cells] == [("toy_ranking", {"n_authors": 2})]


def test_shape_of_pairs_says_what_the_pair_protocols_read():
    bare = PairSet.from_lists(["a", "b"], ["c", "d"])
    assert _shape(bare) == "PairSet of 2 problems, unlabelled"
    full = PairSet.from_lists(
        ["a", "b"],
        ["c", "d"],
        same=[True, False],
        authors=[["x", "x"], ["x", "y"]],
        topics=[["t", "u"], ["t", "t"]],
    )
    assert _shape(full) == "PairSet of 2 problems, labelled, with authors and topics"


def test_only_a_dataset_without_cells_is_told_no_protocol_applies():
    suite = Suite({**PROTOCOLS, "toy_none": _NoSettings()}, toy_loader)
    toy = [DatasetSpec("toy", {"per_author": 8})]
    loaded = GridSpec(datasets=toy, seeds=[0], methods=["random"])
    assert expand(loaded, suite).cells and not expand(loaded, suite).unavailable
    only_none = GridSpec(datasets=toy, seeds=[0], methods=["random"], protocols=["toy_none"])
    reason = expand(only_none, suite).unavailable["dataset toy[per_author=8]"]
    assert reason.startswith("no protocol applies to it (") and "toy_none needs" in reason


class _NoSettings(ToyRanking):
    needs = "nothing a toy has"

    def settings(self, data) -> list[dict]:
        return []
