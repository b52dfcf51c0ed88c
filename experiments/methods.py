"""Method registry: experiment names mapped to factories that build a fresh ``Verifier``.

A factory takes the cell's seed and the run's :class:`MethodOptions` and returns an unfitted
:class:`stylo.verifier.Verifier`; the protocol clones and fits it. Every method of
``baselines.registry`` is here under its name (register a classical method there, with one
line); a method that needs the run's options (a hosted LLM) is one more line in ``METHODS``,
e.g. ``METHODS["llm"] = MethodSpec(lambda seed, o: Prompted(o.llm_base_url, o.llm_model),
hosted_llm=True, kind="llm")``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Callable, Mapping
from urllib.parse import urlsplit

from baselines import registry
from baselines.masked import MaskedVerifier
from stylo.features import EntityMasker, TextDistortion
from stylo.verifier import Verifier

__all__ = ["DEFAULT_OPTIONS", "LOCAL_LLM", "MASKINGS", "METHODS", "MethodOptions", "MethodSpec",
           "Masked", "Registered", "WithParams", "available_methods", "key_options",
           "method_label", "on_server", "unavailable"]


@dataclass(frozen=True)
class MethodOptions:
    """Run-wide options a factory may use.

    ``llm_base_url``/``llm_model`` put every language-model method on a hosted
    OpenAI-compatible server instead of the local in-process model; the API key is read at
    call time from the environment variable named ``llm_api_key_env`` (never stored);
    ``llm_timeout`` (seconds per HTTP response) and ``llm_max_retries`` bound how long a dead
    server can hold a cell. ``cache_dir`` is where a method may keep caches (features, model
    responses); ``n_jobs`` is the parallelism a method may use inside one cell.
    """

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_timeout: float = 120.0
    llm_max_retries: int = 4
    cache_dir: str | None = None
    n_jobs: int = 1

    @property
    def hosted(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)


DEFAULT_OPTIONS = MethodOptions()


@dataclass(frozen=True)
class MethodSpec:
    """How to build one method.

    ``factory(seed, options)`` returns an unfitted Verifier. ``hosted_llm`` methods run only
    when the user passes ``--llm-base-url`` and ``--llm-model``. ``kind`` (``classical``,
    ``embedding``, ``llm`` or ``attribution``, as in ``baselines.registry``) lets a grid run
    the slow kinds on fewer cells; every ``llm`` method runs on the hosted server when the
    options name one, and the model (and server) is part of its cell key and label.
    ``extras`` are the optional installs it needs (``baselines.registry.EXTRAS``).
    """

    factory: Callable[[int, MethodOptions], Verifier]
    hosted_llm: bool = False
    kind: str = "classical"
    extras: tuple[str, ...] = ()


@dataclass(frozen=True)
class Registered:
    """Factory of a ``baselines.registry`` method (picklable, for worker processes)."""

    name: str

    def __call__(self, seed: int, options: MethodOptions) -> Verifier:
        method = registry.make(self.name, seed=seed)
        if registry.kind(self.name) == "llm" and options.hosted:
            method = on_server(method, options)
        return method


METHODS: dict[str, MethodSpec] = {
    name: MethodSpec(Registered(name), kind=registry.kind(name),
                     extras=registry.spec(name).extras)
    for name in registry.methods()}


def on_server(method: Verifier, options: MethodOptions) -> Verifier:
    """``method`` with every language-model backend it holds (its own ``backend`` and those of
    its parts, e.g. a RAG reranker's) set to the options' hosted server; responses are
    cached where the local model's are, keyed by server kind and model."""
    from stylo.llm import OpenAICompatible, ResponseCache, default_cache_path
    backend = OpenAICompatible(options.llm_base_url, options.llm_model,
                               api_key_env=options.llm_api_key_env,
                               timeout=options.llm_timeout,
                               max_retries=options.llm_max_retries,
                               cache=ResponseCache(default_cache_path()))
    names = [k for k in method.get_params(deep=True)
             if k == "backend" or k.endswith("__backend")]
    if not names:
        raise TypeError(f"{type(method).__name__} has no language-model backend to put on "
                        f"{options.llm_base_url}")
    return method.set_params(**dict.fromkeys(names, backend))


#: masking name -> wrapper taking an unfitted Verifier and returning one that masks its input
#: texts (topic words, named entities) before scoring; the with-vs-without masking comparison
#: of the Rethinking-AV splits runs every registered masking
def _text_distortion(verifier: Verifier) -> Verifier:
    return MaskedVerifier(verifier, TextDistortion(k=300, method="dv_ma"))


def _entity_masking(verifier: Verifier) -> Verifier:
    return MaskedVerifier(verifier, EntityMasker())


MASKINGS: dict[str, Callable[[Verifier], Verifier]] = {
    "distortion_dv_ma_300": _text_distortion,
    "entity_masking": _entity_masking,
}


def unavailable(spec: MethodSpec, options: MethodOptions) -> str | None:
    """Why the method cannot run with these options on this machine (None: it can)."""
    if spec.hosted_llm and not options.hosted:
        return "needs --llm-base-url and --llm-model"
    # a hosted server stands in for the local model
    skip = ("llm",) if spec.kind == "llm" and options.hosted else ()
    missing = [e for e in spec.extras if e not in skip
               and any(importlib.util.find_spec(m) is None for m in registry.EXTRAS[e])]
    if missing:
        names = ",".join(missing)
        return f"needs extra {names} (pip install 'stylo[{names}]')"
    return None


def available_methods(options: MethodOptions, methods: dict[str, MethodSpec] = METHODS
                      ) -> list[str]:
    """Registered method names that can run with these options here, in registry order."""
    return [name for name, spec in methods.items() if unavailable(spec, options) is None]


@dataclass(frozen=True)
class WithParams:
    """A factory whose verifier gets ``params`` through ``set_params`` (picklable)."""

    factory: Callable[[int, MethodOptions], Verifier]
    params: Mapping

    def __call__(self, seed: int, options: MethodOptions) -> Verifier:
        return self.factory(seed, options).set_params(**dict(self.params))


@dataclass(frozen=True)
class Masked:
    """A factory whose verifier is wrapped by a masking (picklable, for worker processes)."""

    factory: Callable[[int, MethodOptions], Verifier]
    wrapper: Callable[[Verifier], Verifier]

    def __call__(self, seed: int, options: MethodOptions) -> Verifier:
        return self.wrapper(self.factory(seed, options))


#: the model a language-model method runs without a hosted server, as cell keys name it
LOCAL_LLM = "gemma-3-270m (local)"


def key_options(spec: MethodSpec, options: MethodOptions) -> dict:
    """The options that change a method's numbers, hence belong in the cell key: for a
    language-model method, the model and server it asks (the local model when none)."""
    if spec.hosted_llm or (spec.kind == "llm" and options.hosted):
        return {"llm_base_url": options.llm_base_url, "llm_model": options.llm_model}
    if spec.kind == "llm":
        return {"llm_model": LOCAL_LLM}
    return {}


def method_label(method: str, method_options: Mapping,
                 method_params: Mapping | None = None) -> str:
    """The name a method's row carries in tables and plots: with the model it asked (and the
    server's host), so local and hosted rows never mix, and a prompted method's prompt
    family (AIDBench reports each family apart)."""
    model = method_options.get("llm_model")
    if not model:
        return method
    prompt = (method_params or {}).get("prompt") or (
        registry.prompt_family(method) if method in registry.methods() else None)
    family = f" ({prompt.replace('_', '-')} prompt)" if prompt else ""
    url = method_options.get("llm_base_url")
    where = f"{model} @ {urlsplit(url).netloc or url}" if url else model
    return f"{method}{family} [{where}]"
