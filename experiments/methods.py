"""Method registry: experiment names mapped to factories that build a fresh ``Verifier``.

A factory takes the cell's seed and the run's :class:`MethodOptions` and returns an unfitted
:class:`baselines.base.Verifier`; the protocol clones and fits it. Every method of
``baselines.registry`` is here under its name (register a classical method there, with one
line); a method that needs the run's options (a hosted LLM) is one more line in ``METHODS``,
e.g. ``METHODS["llm"] = MethodSpec(lambda seed, o: Prompted(o.llm_base_url, o.llm_model),
hosted_llm=True, kind="llm")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from baselines import registry
from baselines.base import Verifier
from baselines.masked import MaskedVerifier
from stylo.features import EntityMasker, TextDistortion

__all__ = ["DEFAULT_OPTIONS", "MASKINGS", "METHODS", "MethodOptions", "MethodSpec", "Masked",
           "Registered", "WithParams", "available_methods", "key_options"]


@dataclass(frozen=True)
class MethodOptions:
    """Run-wide options a factory may use.

    ``llm_base_url``/``llm_model`` select a hosted LLM (OpenAI-compatible server);
    ``cache_dir`` is where a method may keep caches (features, model responses); ``n_jobs`` is
    the parallelism a method may use inside one cell.
    """

    llm_base_url: str | None = None
    llm_model: str | None = None
    cache_dir: str | None = None
    n_jobs: int = 1


DEFAULT_OPTIONS = MethodOptions()


@dataclass(frozen=True)
class MethodSpec:
    """How to build one method.

    ``factory(seed, options)`` returns an unfitted Verifier. ``hosted_llm`` methods run only
    when the user passes ``--llm-base-url`` and ``--llm-model``; their URL and model become part
    of the cell key, since they change the numbers. ``kind`` (``classical``, ``embedding`` or
    ``llm``, as in ``baselines.registry``) lets a grid run the slow kinds on fewer cells.
    """

    factory: Callable[[int, MethodOptions], Verifier]
    hosted_llm: bool = False
    kind: str = "classical"


@dataclass(frozen=True)
class Registered:
    """Factory of a ``baselines.registry`` method (picklable, for worker processes)."""

    name: str

    def __call__(self, seed: int, options: MethodOptions) -> Verifier:
        return registry.make(self.name, seed=seed)


METHODS: dict[str, MethodSpec] = {name: MethodSpec(Registered(name), kind=registry.kind(name))
                                  for name in registry.methods()}

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


def available_methods(options: MethodOptions, methods: dict[str, MethodSpec] = METHODS
                      ) -> list[str]:
    """Registered method names that can run with these options, in registry order."""
    has_llm = bool(options.llm_base_url and options.llm_model)
    return [name for name, spec in methods.items() if has_llm or not spec.hosted_llm]


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


def key_options(spec: MethodSpec, options: MethodOptions) -> dict:
    """The options that change a method's numbers, hence belong in the cell key."""
    if spec.hosted_llm:
        return {"llm_base_url": options.llm_base_url, "llm_model": options.llm_model}
    return {}
