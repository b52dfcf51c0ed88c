"""The experiment grid: datasets x protocols x settings x methods x seeds, as a list of cells.

A :class:`GridSpec` is declarative: which datasets (with their load options), which protocols
(optionally restricted to some datasets), which methods and seeds. :func:`expand` turns it into
:class:`~experiments.cells.Cell` objects by loading each dataset once and asking each protocol
which settings it offers on it (none: it does not apply). Every cell has a stable key, the hash
of its JSON-normalised spec, so a result on disk is found again by any later run of the same
cell.

Quick runs shrink sample sizes through ``protocol_params``: constructor arguments of a
registered protocol's class (e.g. ``{"n_groups": 2}`` for one-to-many); the protocol is rebuilt
with them and they are part of the cell key, so quick and full results never mix.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from baselines.registry import unavailable
from experiments.cells import Cell, normalise
from experiments.methods import MASKINGS, key_options
from experiments.suite import Suite
from stylo.corpus import PairSet

__all__ = [
    "DatasetSpec",
    "Expansion",
    "GridSpec",
    "KindScope",
    "expand",
    "full_grid",
    "quick_grid",
]


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset name for ``stylo.datasets.load`` and the options to load it with."""

    name: str
    load: Mapping = field(default_factory=dict)

    def label(self) -> str:
        if not self.load:
            return self.name
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.load.items()))
        return f"{self.name}[{opts}]"


@dataclass(frozen=True)
class KindScope:
    """Where methods of one kind (``embedding``, ``llm``) run: only on these protocols and
    datasets (``{protocol: [dataset, ...]}``), with ``n_seeds`` only the grid's first
    ``n_seeds`` seeds, and with ``settings`` (``{protocol: [partial setting, ...]}``) only
    the settings that contain all items of one of the partial settings; ``protocol_params``
    replaces the grid's protocol parameters for them (e.g. fewer triplets); ``maskings``, when
    given, are the grid's maskings they run with on its masking protocols (instead of those
    the grid's ``masking_methods`` give). They are slow, so the reference grid gives them the
    seeds' tables only."""

    protocol_datasets: Mapping[str, list[str]]
    n_seeds: int | None = None
    settings: Mapping[str, list[dict]] = field(default_factory=dict)
    protocol_params: Mapping[str, dict] = field(default_factory=dict)
    maskings: tuple[str, ...] | None = None

    def on(self, datasets: list[str]) -> KindScope:
        """This scope with each of its protocols on ``datasets`` instead of its own datasets:
        the same seeds, sizes (``protocol_params``) and maskings, and the same settings but
        for one-to-many's ``first_author``, which only a corpus with author lists names (on
        any other, one-to-many ranks by the one author a text has)."""
        settings = {
            p: [{k: v for k, v in w.items() if k != "first_author"} for w in partial]
            for p, partial in self.settings.items()
        }
        return KindScope(
            {p: list(datasets) for p in self.protocol_datasets},
            n_seeds=self.n_seeds,
            settings=settings,
            protocol_params=dict(self.protocol_params),
            maskings=self.maskings,
        )

    def admits(self, protocol: str, dataset: str, setting: Mapping, seed_index: int) -> bool:
        wanted = self.settings.get(protocol)
        return (
            dataset in self.protocol_datasets.get(protocol, ())
            and (self.n_seeds is None or seed_index < self.n_seeds)
            and (
                wanted is None
                or any(all(setting.get(k) == v for k, v in w.items()) for w in wanted)
            )
        )


@dataclass
class GridSpec:
    """What to run.

    ``protocols``: names to run (``None``: every registered protocol). ``protocol_datasets``
    restricts a protocol to some dataset names. ``methods``: names in the method registry
    (``None``: every method available with the run's options). ``max_settings`` keeps the
    first settings of each (dataset, protocol); ``protocol_params`` maps a protocol name to
    constructor arguments (see the module docstring). ``kind_scopes`` maps a method kind to
    the :class:`KindScope` its methods are limited to; kinds not listed run everywhere.
    ``maskings`` run on ``masking_protocols`` for ``masking_methods`` (None: every method).
    ``single_seed_protocols`` run with the first seed only: fixed official problems (PAN),
    where a seed changes nothing but a method's own random draws, and protocols whose task
    already holds its own repeats (one-to-many: 10 groups x 3 repeats). ``method_params``
    maps a method name to parameters set on it (``set_params``) in this grid, e.g. fewer
    training pairs for a slow method in a quick run; they are part of the cell key.
    """

    datasets: list[DatasetSpec]
    seeds: list[int]
    protocols: list[str] | None = None
    methods: list[str] | None = None
    protocol_datasets: dict[str, list[str]] = field(default_factory=dict)
    max_settings: int | None = None
    protocol_params: dict[str, dict] = field(default_factory=dict)
    maskings: list[str] = field(default_factory=list)
    masking_protocols: list[str] = field(default_factory=lambda: ["rethinking_av"])
    masking_methods: list[str] | None = None
    single_seed_protocols: list[str] = field(default_factory=list)
    kind_scopes: dict[str, KindScope] = field(default_factory=dict)
    method_params: dict[str, dict] = field(default_factory=dict)


# The corpora of the seeds' tables. Names absent on a machine are reported and skipped.
_CORPORA = ["imdb62", "enron", "blog", "guardian", "mlpapers", "federalist"]
_PAN_AV = [
    "pan13_av_en",
    "pan14_av/du_essays",
    "pan14_av/du_reviews",
    "pan14_av/en_essays",
    "pan14_av/en_novels",
    "pan14_av/gr_articles",
    "pan14_av/sp_articles",
    "pan15_av_en",
]
_CDAA = ["pan18_cdaa", "pan19_cdaa"]

_FULL_PROTOCOL_DATASETS = {
    "aidbench_one_to_one": _CORPORA,
    "aidbench_one_to_two": _CORPORA,
    "aidbench_one_to_many": ["mlpapers", "blog", "enron"],
    "pan_verification": _PAN_AV,
    # PAN19 with a verifier is 36,459 (unknown text, candidate) problems a method (all
    # classical methods together about 7 minutes of one worker); it also runs in the
    # Rethinking-AV splits (its topics are fandoms)
    "cdaa_attribution": ["pan18_cdaa", "pan19_cdaa"],
    "rethinking_av": ["guardian", "blog", "pan19_cdaa"],
    # closed-set attribution wherever authors have enough texts (PAN18/19: all their texts
    # with known authors, each problem's candidates in one language)
    "closed_attribution": [
        "imdb62",
        "enron",
        "blog",
        "guardian",
        "mlpapers",
        "pan18_cdaa",
        "pan19_cdaa",
    ],
}

# one small dataset per protocol; a protocol not listed runs nowhere in a quick run
_QUICK = {
    "aidbench_one_to_one": ["imdb62"],
    "aidbench_one_to_two": ["imdb62"],
    "aidbench_one_to_many": ["mlpapers"],
    "pan_verification": ["pan15_av_en"],
    "rethinking_av": ["guardian"],
    "cdaa_attribution": ["pan18_cdaa"],
    "closed_attribution": ["guardian"],
}
# cross-domain attribution has no size parameter: the quick run loads fewer problems
_QUICK_LOAD = {"pan18_cdaa": {"split": "train", "problem": "problem00002"}}
_QUICK_PARAMS = {
    "aidbench_one_to_two": {"n_triplets": 40},
    "aidbench_one_to_many": {"n_groups": 2, "n_repeats": 1},
    "rethinking_av": {"n_pairs": {"train": 100, "val": 0, "test": 60}},
}


#: the topic/entity maskings run on the Rethinking-AV splits for one method of each family
#: (n-gram distance, impostors, compression, Delta, learned pairs) rather than all of them
_MASKED_METHODS = ["naive", "impostors", "ppm", "delta", "logreg-pair"]
#: protocols on fixed official problems, and one-to-many, whose task is 10 groups x 3 repeats
_ONE_SEED = ["pan_verification", "cdaa_attribution", "aidbench_one_to_many"]


_MLPAPERS_2 = {"n_authors": 2, "first_author": True}
#: attribution-only methods run where a protocol attributes among candidates
#: the protocols that attribute texts among candidates, the only ones an attribution-only
#: method (kind "attribution") can run in
ATTRIBUTING = ("cdaa_attribution", "closed_attribution")
_ATTRIBUTION = KindScope({p: _FULL_PROTOCOL_DATASETS[p] for p in ATTRIBUTING})
_MLPAPERS_5 = {"n_authors": 5, "first_author": True}
#: the fine-tuned transformers (bert-pair, siamese-pair; sizes in the registry) on the
#: Rethinking-AV splits of the paper's kinds of data, with and without entity masking as the
#: paper's Table 4 (not text distortion), first seed only; siamese-pair, cheap to rank with,
#: is also the neural row of one-to-many on the embedding rows' tasks: 14 splits x 2 x 2 + 2 =
#: 58 cells on the classical rows' own tasks. Sizes (baselines/registry.py) chosen on validation
#: pairs within about an hour on 2 cores; measured alone on an idle machine (--n-jobs 2): 36 min
#: 46 s for all 58, a bert-pair cell ~97 s, a siamese-pair cell ~51 s (median)
_RETHINKING_NEURAL = {"rethinking_av": ["pan19_cdaa", "guardian", "blog"]}
_NEURAL = KindScope(_RETHINKING_NEURAL, n_seeds=1, maskings=("entity_masking",))
_SIAMESE = KindScope(
    {**_RETHINKING_NEURAL, "aidbench_one_to_many": ["mlpapers"]},
    n_seeds=1,
    settings={"aidbench_one_to_many": [_MLPAPERS_2, _MLPAPERS_5]},
    maskings=("entity_masking",),
)
#: embedding and local-LLM rows run on the classical rows' own tasks (first seed: 200
#: one-to-two triplets; one-to-many's 10 groups x 3 repeats), on as many corpora as keep the
#: local model (Gemma 3 270M on 2 cores) near an hour. The likelihood verifier, reading the
#: query given each candidate only (see the registry), runs on every one-to-two corpus and
#: on 2 and 5 first authors; the prompted judge (one short answer a question) on IMDb62 and
#: Enron and 2 first authors; both orders (for the position-bias figures) and RAG on one
#: corpus each
_KIND_SCOPES = {
    "attribution": _ATTRIBUTION,
    "neural": _NEURAL,
    "siamese-pair": _SIAMESE,
    "embedding": KindScope(
        {
            "aidbench_one_to_two": ["imdb62", "enron", "blog", "guardian"],
            "aidbench_one_to_many": ["mlpapers"],
        },
        n_seeds=1,
        settings={"aidbench_one_to_many": [_MLPAPERS_2, _MLPAPERS_5]},
    ),
    "llm": KindScope(
        {"aidbench_one_to_two": ["imdb62", "enron"], "aidbench_one_to_many": ["mlpapers"]},
        n_seeds=1,
        settings={"aidbench_one_to_many": [_MLPAPERS_2]},
    ),
    "llm-likelihood": KindScope(
        {
            "aidbench_one_to_two": ["imdb62", "enron", "blog", "guardian"],
            "aidbench_one_to_many": ["mlpapers"],
        },
        n_seeds=1,
        settings={"aidbench_one_to_many": [_MLPAPERS_2, _MLPAPERS_5]},
    ),
    "llm-prompt-both-orders": KindScope({"aidbench_one_to_two": ["imdb62"]}, n_seeds=1),
    "rag-embedding-llm": KindScope(
        {"aidbench_one_to_many": ["mlpapers"]},
        n_seeds=1,
        settings={"aidbench_one_to_many": [_MLPAPERS_2]},
    ),
}
#: a tiny fine-tune on one split, unmasked, so the neural path runs: 8 pairs, one 32-token
#: chunk a text; 4 to 15 s a cell (the first loads torch) on a machine loaded ~3x
_QUICK_NEURAL = {"n_train_pairs": 8, "max_tokens": 32, "max_chunks": 1, "epochs": 1}
#: a prompt of three whole IMDb62 reviews is ~1,400 tokens, ~4 s for Gemma 3 270M on 2 cores;
#: texts cut to 300 characters make it ~300
_QUICK_CUT = 300
#: the local model reads a prompt at ~3.7 ms a token on 2 threads, and two cells at once take
#: 1.7x as long each (a 1,100-token prompt: 4.1 s alone, 7.0 s beside another on 1 thread
#: each or on 2): whole texts (IMDb62 1,739 characters on average) made the prompted cells 98
#: of the LLM part's 185 worker-minutes. Each text is cut to 400 characters (~100 tokens) for
#: the local model only; a hosted model reads whole texts, as AIDBench's did
_LOCAL_PROMPT_CUT = 400


def _prompt_cut(chars: int) -> dict[str, dict]:
    """Method parameters cutting each text of the prompted LLM methods to ``chars``."""
    return {
        "llm-prompt": {"max_text_chars": chars},
        "llm-prompt-both-orders": {"max_text_chars": chars},
        "rag-embedding-llm": {"reranker__max_text_chars": chars},
    }


#: smaller settings of the slowest methods, for a path check (the reference grid keeps the
#: registry's): the likelihood verifier's forward passes (~0.2 s for 32 tokens with all 262k
#: logits) on 2 training pairs of 16 tokens (the registry: 50 pairs, 128 tokens); the stacked
#: verifier, which fits its four bases once a fold and once on all data, on 2 folds, not 3, and
#: 300 out-of-fold pairs, not 600 (its 7 quick cells: 22.9 worker-seconds, 27.6 with 600);
#: General Impostors 25 iterations, not 50; LambdaG 10 reference models, not 30
_QUICK_METHOD_PARAMS = {
    "llm-likelihood": {"n_train_pairs": 2, "max_text_tokens": 16},
    "bert-pair": dict(_QUICK_NEURAL),
    "siamese-pair": dict(_QUICK_NEURAL),
    "ensemble": {"n_folds": 2, "n_pairs": 300},
    "impostors": {"n_iter": 25},
    "lambdag": {"n_references": 10},
    **_prompt_cut(_QUICK_CUT),
}
_QUICK_MODEL_SCOPE = KindScope(
    {"aidbench_one_to_two": ["imdb62"]},
    protocol_params={"aidbench_one_to_two": {"n_triplets": 2}},
)
_QUICK_KIND_SCOPES = {
    "attribution": _ATTRIBUTION,
    "neural": KindScope({"rethinking_av": ["guardian"]}, maskings=()),
    # the LLM cells' triplets: one task, so that one worker imports sentence-transformers and
    # loads the embedding model for `embedding` and `rag-embedding-llm` (experiments.runner)
    "embedding": _QUICK_MODEL_SCOPE,
    "llm": _QUICK_MODEL_SCOPE,
}


def full_grid(seed: int = 0, local_llm: bool = True) -> GridSpec:
    """The reference grid: every corpus, every registered protocol and classical method, the
    maskings for one method per family, three seeds (one on fixed official problems and
    one-to-many); embedding and LLM rows on AIDBench's one-to-two and one-to-many only;
    attribution-only methods on PAN18/19 attribution. The attribution corpora come first: one
    worker runs all methods of a task, and PAN19's is the longest task (minutes), which should
    not start last. ``local_llm``: the LLM methods run the local model, whose prompted methods
    read each text cut to ``_LOCAL_PROMPT_CUT`` characters (a hosted model reads them whole)."""
    return GridSpec(
        datasets=[DatasetSpec(n) for n in _CDAA + _CORPORA + _PAN_AV],
        seeds=[seed, seed + 1, seed + 2],
        protocol_datasets=dict(_FULL_PROTOCOL_DATASETS),
        maskings=list(MASKINGS),
        masking_methods=list(_MASKED_METHODS),
        single_seed_protocols=list(_ONE_SEED),
        kind_scopes=dict(_KIND_SCOPES),
        method_params=_prompt_cut(_LOCAL_PROMPT_CUT) if local_llm else {},
    )


def quick_grid(seed: int = 0) -> GridSpec:
    """A small complete slice: every protocol and method once, on a few datasets, one seed."""
    names = sorted(set(sum(_QUICK.values(), [])))
    return GridSpec(
        datasets=[DatasetSpec(n, _QUICK_LOAD.get(n, {})) for n in names],
        seeds=[seed],
        protocol_datasets={p: list(d) for p, d in _QUICK.items()},
        max_settings=1,
        protocol_params=dict(_QUICK_PARAMS),
        maskings=list(MASKINGS),
        masking_methods=list(_MASKED_METHODS),
        kind_scopes=dict(_QUICK_KIND_SCOPES),
        method_params={m: dict(p) for m, p in _QUICK_METHOD_PARAMS.items()},
    )


@dataclass
class Expansion:
    """The cells of a grid, and what was left out with the reason (one line each).

    ``unavailable`` holds the reason of each left-out dataset and method by name, under
    ``"dataset NAME"`` and ``"method NAME"``, so a caller can tell a user why a name they
    asked for is in no cell.
    """

    cells: list[Cell]
    skipped: list[str]
    unavailable: dict[str, str] = field(default_factory=dict)


def _settings(protocol, data, grid: GridSpec) -> list[dict]:
    settings = [normalise(s) for s in protocol.settings(data)]
    if grid.max_settings is not None:
        settings = settings[: grid.max_settings]
    return settings


def _shape(data) -> str:
    """What decides whether a protocol applies to ``data``: its authors and their texts, or
    its problems."""
    authors = getattr(data, "authors", None)
    if getattr(data, "texts", None) is None or authors is None:
        shape = f"{type(data).__name__} of {len(data)} problems"
        if isinstance(data, PairSet):
            columns = [c for c in ("split", "authors", "topics") if c in data.frame.columns]
            shape += ", labelled" if data.labelled else ", unlabelled"
            shape += f", with {' and '.join(columns)}" if columns else ""
        return shape
    counts = Counter(authors)
    most = max(counts.values(), default=0)
    return f"{len(counts)} authors, the most prolific with {most} texts"


def _scope(grid: GridSpec, method: str, suite: Suite) -> KindScope | None:
    """The scope a method runs in: its own, else its kind's, else None (everywhere)."""
    return grid.kind_scopes.get(method, grid.kind_scopes.get(suite.methods[method].kind))


def _protocol_cells(
    grid: GridSpec,
    ds: DatasetSpec,
    data,
    pname: str,
    params: dict,
    method_names: list[str],
    suite: Suite,
    skipped: list[str],
) -> list[Cell]:
    protocol = suite.protocol(pname, params)
    try:  # an empty list: the protocol does not apply to this dataset
        settings = _settings(protocol, data, grid)
    except Exception as exc:
        skipped.append(f"{pname} on {ds.label()}: settings failed: {type(exc).__name__}: {exc}")
        return []
    if not settings and not grid.protocol_datasets:
        # a dataset the user named goes to every protocol: say which ones it is not fit for
        line = f"{pname} on {ds.label()}: does not apply to it ({_shape(data)})"
        if getattr(protocol, "needs", ""):
            line += f"; it needs {protocol.needs}"
        if line not in skipped:
            skipped.append(line)
    masked = pname in grid.masking_protocols
    seeds = grid.seeds[:1] if pname in grid.single_seed_protocols else grid.seeds
    cells = []
    for setting in settings:
        for s_index, seed in enumerate(seeds):
            for m in method_names:
                scope = _scope(grid, m, suite)
                if scope is not None and not scope.admits(pname, ds.name, setting, s_index):
                    continue
                masks = [None]
                if masked and scope is not None and scope.maskings is not None:
                    masks += [k for k in grid.maskings if k in scope.maskings]
                elif masked and (grid.masking_methods is None or m in grid.masking_methods):
                    masks += grid.maskings
                for mask in masks:
                    cells.append(
                        Cell(
                            ds.name,
                            normalise(dict(ds.load)),
                            pname,
                            setting,
                            m,
                            key_options(suite.methods[m], suite.options),
                            int(seed),
                            params,
                            mask,
                            normalise(dict(grid.method_params.get(m, {}))),
                            getattr(protocol, "revision", 1),
                        )
                    )
    return cells


def expand(grid: GridSpec, suite: Suite) -> Expansion:
    """All cells of ``grid`` over ``suite``'s protocols and methods, with its options, in a
    cache-friendly order (cells of one task are adjacent).

    The suite's loader returns a Corpus or PairSet, or raises (a missing dataset, bad data):
    such a dataset is skipped and reported, not fatal.
    """
    protocols, methods = suite.protocols, suite.methods
    unknown = [p for p in (grid.protocols or []) if p not in protocols]
    if unknown:
        raise ValueError(f"unknown protocol(s) {unknown}; registered: {sorted(protocols)}")
    wanted_methods = grid.methods if grid.methods is not None else list(methods)
    unknown = [m for m in wanted_methods if m not in methods]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; registered: {sorted(methods)}")
    unknown = [m for m in grid.method_params if m not in methods]
    if unknown:
        raise ValueError(
            f"method_params for unknown method(s) {unknown}; registered: {sorted(methods)}"
        )
    unknown = [m for m in grid.maskings if m not in suite.maskings]
    if unknown:
        raise ValueError(f"unknown masking(s) {unknown}; registered: {sorted(suite.maskings)}")
    reasons = {m: unavailable(methods[m], suite.options) for m in wanted_methods}
    missing = {f"method {m}": why for m, why in reasons.items() if why}
    skipped = [f"{what}: {why}" for what, why in missing.items()]
    method_names = [m for m in wanted_methods if not reasons[m]]
    protocol_names = grid.protocols if grid.protocols is not None else list(protocols)

    cells: list[Cell] = []
    for ds in grid.datasets:
        users = [
            p
            for p in protocol_names
            if p not in grid.protocol_datasets or ds.name in grid.protocol_datasets[p]
        ]
        if not users:
            continue
        try:
            data = suite.data(ds.name, ds.load)
        except Exception as exc:  # a missing or broken dataset must not stop the run
            what = f"dataset {ds.label()}"
            missing[what] = f"{type(exc).__name__}: {exc}"
            skipped.append(f"{what}: {missing[what]}")
            continue
        for pname in users:
            # methods whose kind scope sizes this protocol its own way get their own tasks
            variants: dict[str, list[str]] = {}
            for m in method_names:
                scope = _scope(grid, m, suite)
                params = (
                    scope.protocol_params[pname]
                    if scope is not None and pname in scope.protocol_params
                    else grid.protocol_params.get(pname, {})
                )
                variants.setdefault(json.dumps(normalise(params), sort_keys=True), []).append(m)
            for variant, names in variants.items():
                cells += _protocol_cells(
                    grid, ds, data, pname, json.loads(variant), names, suite, skipped
                )
        if not grid.protocol_datasets and not any(
            c.dataset == ds.name and c.load == normalise(dict(ds.load)) for c in cells
        ):
            # the one line a user gets for a dataset they named and no protocol takes
            needs = [
                f"{p} needs {protocols[p].needs}"
                for p in users
                if getattr(protocols[p], "needs", "")
            ]
            missing[f"dataset {ds.label()}"] = "; ".join(
                [f"no protocol applies to it ({_shape(data)})", *needs]
            )
    return Expansion(cells=cells, skipped=skipped, unavailable=missing)
