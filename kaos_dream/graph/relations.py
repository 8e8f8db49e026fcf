"""Edge relations and how activation spreads along them.

Activation flows *forward* along an edge with the relation's coefficient and *backward* with the
same magnitude times :data:`REVERSE_FACTOR`: a failure reminds you of what caused it and of what
prevents it, which is what root-cause and failure -> fix retrieval need. Only the forward direction
of ``prevented`` is inhibitory; walking it backwards leads from an outcome to its preventer.
"""

from __future__ import annotations

RELATIONS = ("co_occurs_with", "caused", "enabled", "prevented", "fact", "meta")
UNDIRECTED = frozenset({"co_occurs_with"})
# Relations whose weight is a prediction checked by online learning.
PREDICTIVE = ("caused", "prevented")

# Forward coefficients; the sign of `prevented` marks it inhibitory (additive mode uses -0.3).
FORWARD_COEFF: dict[str, float] = {
    "co_occurs_with": 1.0,
    "caused": 1.0,
    "enabled": 0.5,
    "fact": 0.8,
    "meta": 0.6,
    "prevented": -0.3,
}
# Backward (dst -> src) coefficients: always excitatory.
BACKWARD_COEFF: dict[str, float] = {
    "co_occurs_with": 1.0,
    "caused": 1.0,
    "enabled": 0.5,
    "fact": 0.8,
    "meta": 0.6,
    "prevented": 1.0,
}
REVERSE_FACTOR = 0.5

STRENGTH_FLOOR = 0.1
STRENGTH_CEIL = 1.0
DEFAULT_DECLARED_STRENGTH = 0.8

# Retrieval: search hits used as activation seeds, and items `search --expand` may add at most.
DEFAULT_SEEDS = 5
DEFAULT_EXTRA = 3


def check_relation(relation: str) -> str:
    from ..errors import InvalidInputError

    rel = relation.strip().lower()
    if rel not in RELATIONS:
        raise InvalidInputError(f"unknown relation {relation!r}: use one of {', '.join(RELATIONS)}")
    return rel
