"""Evaluation protocols: seeded, reproducible tasks and tidy metric tables.

``PROTOCOLS`` maps each registered name to a ready-to-use instance:

- ``aidbench_one_to_one``, ``aidbench_one_to_two`` (:mod:`stylo.protocols.aidbench`),
  ``aidbench_one_to_many`` (:mod:`stylo.protocols.aidbench_one_to_many`)
- ``pan_verification`` (:mod:`stylo.protocols.pan`)
- ``rethinking_av`` (:mod:`stylo.protocols.rethinking`)
- ``cdaa_attribution`` (:mod:`stylo.protocols.cdaa`)
- ``closed_attribution`` (:mod:`stylo.protocols.closed_attribution`)
"""

from stylo.protocols.aidbench import OneToOne, OneToTwo
from stylo.protocols.aidbench_one_to_many import OneToMany
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
