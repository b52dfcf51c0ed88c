"""Evaluation protocols: seeded, reproducible tasks and tidy metric tables.

``PROTOCOLS`` maps each registered name to a ready-to-use instance:

- ``aidbench_one_to_one``, ``aidbench_one_to_two``, ``aidbench_one_to_many``
  (:mod:`stylo.protocols.aidbench`)
- ``pan_verification`` (:mod:`stylo.protocols.pan`)
- ``rethinking_av`` (:mod:`stylo.protocols.rethinking`)
- ``cdaa_attribution`` (:mod:`stylo.protocols.cdaa`)
- ``closed_attribution`` (:mod:`stylo.protocols.closed_attribution`)
"""

from stylo.protocols.aidbench import OneToMany, OneToOne, OneToTwo
from stylo.protocols.base import Protocol, ProtocolError, RankingQuery, Task, Triplets
from stylo.protocols.cdaa import CrossDomainAttribution
from stylo.protocols.closed_attribution import ClosedSetAttribution
from stylo.protocols.pan import PanVerification
from stylo.protocols.rethinking import RethinkingAV

__all__ = [
    "PROTOCOLS",
    "Protocol",
    "ProtocolError",
    "RankingQuery",
    "Task",
    "Triplets",
    "OneToOne",
    "OneToTwo",
    "OneToMany",
    "PanVerification",
    "RethinkingAV",
    "CrossDomainAttribution",
    "ClosedSetAttribution",
]

PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        OneToOne(),
        OneToTwo(),
        OneToMany(),
        PanVerification(),
        RethinkingAV(),
        CrossDomainAttribution(),
        ClosedSetAttribution(),
    )
}
