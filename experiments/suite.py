"""What a run draws on, in one object: the protocols, the dataset loader, the methods and
maskings by name, and the run's method options.

The grid asks it for a cell's protocol and data when it lists settings; a worker asks it for
a task's data and sampled task and for a cell's method. It is picklable (sent with every
worker task); loaded data stays in a small per-process cache, so a worker task that follows
another on the same dataset, or a run in the process that listed the settings, does not load
it again.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baselines import registry
from baselines.registry import DEFAULT_OPTIONS, MethodOptions, MethodSpec
from experiments.methods import MASKINGS, Masked, WithParams

if TYPE_CHECKING:
    from experiments.grid import Cell
    from stylo.verifier import Verifier

__all__ = ["Suite"]

#: cells come ordered by dataset: one corpus in memory is enough
_DATA_CACHE_SIZE = 1
_DATA: OrderedDict = OrderedDict()


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


@dataclass(frozen=True)
class Suite:
    """``protocols`` maps names to protocol objects, ``methods`` names to
    :class:`baselines.registry.MethodSpec` (default: the registry), ``maskings`` names to
    verifier wrappers; ``loader(name, **load)`` loads a dataset; ``options`` are the run's
    :class:`baselines.registry.MethodOptions`."""

    protocols: Mapping[str, object]
    loader: Callable
    methods: Mapping[str, MethodSpec] = field(default_factory=lambda: registry.METHODS)
    maskings: Mapping[str, Callable[[Verifier], Verifier]] = field(default_factory=lambda: MASKINGS)
    options: MethodOptions = DEFAULT_OPTIONS

    def protocol(self, name: str, params: Mapping | None = None):
        """The registered protocol ``name``, rebuilt from its class with ``params`` if any."""
        proto = self.protocols[name]
        return type(proto)(**dict(params)) if params else proto

    def data(self, name: str, load: Mapping):
        """Dataset ``name`` loaded with ``load``, from this process's cache when it holds it."""
        key = (_qualname(self.loader), name, json.dumps(dict(load), sort_keys=True))
        if key in _DATA:
            _DATA.move_to_end(key)
            return _DATA[key]
        value = self.loader(name, **dict(load))
        _DATA[key] = value
        if len(_DATA) > _DATA_CACHE_SIZE:
            _DATA.popitem(last=False)
        return value

    def task(self, cell: Cell) -> tuple:
        """The protocol of ``cell`` (which evaluates its task) and its sampled task, which
        every cell of its ``task_key`` shares."""
        protocol = self.protocol(cell.protocol, cell.protocol_params)
        return protocol, protocol.sample(
            self.data(cell.dataset, cell.load), dict(cell.setting), int(cell.seed)
        )

    def factory(self, cell: Cell) -> Callable[[int, MethodOptions], Verifier]:
        """The factory of ``cell``'s method: the registered one, with the grid's parameters of
        the method set and its masking around it."""
        factory = self.methods[cell.method].factory
        if cell.method_params:
            factory = WithParams(factory, cell.method_params)
        return factory if cell.masking is None else Masked(factory, self.maskings[cell.masking])

    def method(self, cell: Cell) -> Verifier:
        """A fresh, unfitted instance of ``cell``'s method for its seed."""
        return self.factory(cell)(int(cell.seed), self.options)
