"""What a run draws on, in one object: the protocols, the dataset loader, the methods and
maskings by name, and the run's method options.

The grid asks it for a cell's protocol and data when it lists settings; a worker asks it for
a task's data and sampled task and for a cell's method. It is picklable (sent with every
worker task); loaded data and sampled tasks stay in small per-process caches, so a worker
task that follows another on the same dataset or task, or a run in the process that listed the
settings, does not load or sample it again.
"""

from __future__ import annotations

import json
import pickle
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baselines import registry
from baselines.registry import DEFAULT_OPTIONS, MethodOptions, MethodSpec
from experiments.methods import MASKINGS, Masked, WithParams

if TYPE_CHECKING:
    from experiments.cells import Cell
    from stylo.verifier import Verifier

__all__ = ["Suite"]

#: after the costliest kinds, cells come in the grid's order, by dataset: one corpus in
#: memory is enough (a worker's task cache below spares most reloads)
_DATA_CACHE_SIZE = 1
_DATA: OrderedDict = OrderedDict()
#: a worker gets one cell at a time, and the next is most often of the same task
_TASK_CACHE_SIZE = 2
_TASKS: OrderedDict = OrderedDict()


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


def _cached(cache: OrderedDict, size: int, key, make: Callable):
    """``cache[key]``, made with ``make()`` when missing; the cache keeps the ``size`` most
    recently used."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = make()
    cache[key] = value
    if len(cache) > size:
        cache.popitem(last=False)
    return value


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
        return _cached(_DATA, _DATA_CACHE_SIZE, key, lambda: self.loader(name, **dict(load)))

    def task(self, cell: Cell) -> tuple:
        """The protocol of ``cell`` (which evaluates its task) and its sampled task, which
        every cell of its ``task_key`` shares: from this process's cache when it holds it
        (sampling is seeded, so a cached task is the one sampling would draw again)."""
        protocol = self.protocol(cell.protocol, cell.protocol_params)
        # the protocol object's state, not only its class: suites may configure it differently
        key = (_qualname(self.loader), pickle.dumps(protocol), cell.task_key)
        return protocol, _cached(
            _TASKS,
            _TASK_CACHE_SIZE,
            key,
            lambda: protocol.sample(
                self.data(cell.dataset, cell.load), dict(cell.setting), int(cell.seed)
            ),
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
