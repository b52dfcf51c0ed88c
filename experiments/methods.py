"""How the grid uses the registered methods (``baselines.registry``): the maskings it can wrap
them in, the factories of a cell's method (with its grid parameters and masking), the options
that enter a cell's key, and the name a method's rows carry in tables and plots.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from baselines import registry
from baselines.masked import MaskedVerifier
from baselines.registry import MethodOptions, MethodSpec
from stylo.features import EntityMasker, TextDistortion
from stylo.verifier import Verifier

__all__ = ["LOCAL_LLM", "MASKINGS", "Masked", "WithParams", "key_options", "method_label"]


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
    if spec.needs_server or (spec.kind == "llm" and options.hosted):
        return {"llm_base_url": options.llm_base_url, "llm_model": options.llm_model}
    if spec.kind == "llm":
        return {"llm_model": LOCAL_LLM}
    return {}


def method_label(method: str, method_options: Mapping, method_params: Mapping | None = None) -> str:
    """The name a method's row carries in tables and plots: with the model it asked (and the
    server's host), so local and hosted rows never mix, a prompted method's prompt family
    (AIDBench reports each family apart) and the length its texts were cut to, if any."""
    model = method_options.get("llm_model")
    if not model:
        return method
    prompt = (method_params or {}).get("prompt") or (
        registry.prompt_family(method) if method in registry.METHODS else None
    )
    family = f" ({prompt.replace('_', '-')} prompt)" if prompt else ""
    cut = next(
        (v for k, v in (method_params or {}).items() if k.split("__")[-1] == "max_text_chars"),
        None,
    )
    texts = f", texts cut to {cut} chars" if cut else ""
    url = method_options.get("llm_base_url")
    where = f"{model} @ {urlsplit(url).netloc or url}" if url else model
    return f"{method}{family} [{where}{texts}]"


def row_identity(spec: Mapping) -> dict:
    """What names a stored cell's rows in tables and plots: ``dataset``, ``protocol``,
    ``setting`` (JSON; a masking shows as a setting key, so that tables and plots compare with
    and without it), ``method`` (its :func:`method_label`) and ``seed``."""
    setting = {**spec["setting"], **({"masking": spec["masking"]} if "masking" in spec else {})}
    return {
        "dataset": spec["dataset"],
        "protocol": spec["protocol"],
        "setting": json.dumps(setting, sort_keys=True),
        "method": method_label(
            spec["method"], spec.get("method_options", {}), spec.get("method_params")
        ),
        "seed": spec["seed"],
    }
