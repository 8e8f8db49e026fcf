"""Online learning of causal edge weights (seed 003 layer 2).

Every outgoing ``caused`` / ``prevented`` edge of an action is a prediction; when the action is
taken and outcomes are reported, each prediction is checked and its weight moves
``w ← w + η (r − w)`` (r = 1 if the prediction held, 0 if not):

* ``caused A→B`` predicts B happens: r = 1 when B is among the outcomes that happened, r = 0 when
  B is reported absent, or when it did not happen and ``closed_world`` (every outcome of the action
  was reported, which is how episodes report failures);
* ``prevented A→B`` predicts B does not happen. It learns only when B was *observable*: r = 1 when
  B is reported absent, r = 0 when B happened; with no word on B it is left alone (the
  confirmation problem: an unobserved outcome is not evidence that it was prevented);
* ``enabled`` and the associative relations are not predictions and are not touched.

Edges that get no evidence slowly lose confidence (:func:`neglect`: ``w ← w · (1 − λ)``, never below
the strength floor), which the dream runs once per cycle.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import InvalidInputError
from ..store import transaction
from .edges import clamp_strength
from .nodes import Node, check_exists
from .relations import PREDICTIVE, STRENGTH_FLOOR

if TYPE_CHECKING:
    from ..store.context import Context


@dataclass(frozen=True)
class Update:
    edge_id: int
    src: str
    relation: str
    dst: str
    before: float
    after: float
    correct: bool

    def to_dict(self) -> dict[str, object]:
        return {"edge_id": self.edge_id, "src": self.src, "relation": self.relation, "dst": self.dst,
                "before": self.before, "after": self.after, "correct": self.correct}


@dataclass(frozen=True)
class Observation:
    action: str
    updates: tuple[Update, ...]
    skipped: tuple[int, ...] = field(default=())  # prevented edges whose outcome was not observable

    def to_dict(self) -> dict[str, object]:
        return {"action": self.action, "updates": [u.to_dict() for u in self.updates], "skipped": list(self.skipped)}


def observe(
    lib: Context,
    action: Node,
    *,
    happened: Iterable[Node] = (),
    absent: Iterable[Node] = (),
    taken: bool = True,
    closed_world: bool = True,
    rate: float | None = None,
) -> Observation:
    """Check each outgoing ``caused``/``prevented`` edge of ``action`` against what was seen."""
    happened_set = set(happened)
    absent_set = set(absent)
    both = happened_set & absent_set
    if both:
        raise InvalidInputError(f"{sorted(map(str, both))[0]} cannot both have happened and be absent")
    eta = lib.settings.graph_learning_rate if rate is None else rate
    if not 0.0 < eta <= 1.0:
        raise InvalidInputError("learning rate must be in (0, 1]")
    if not taken:  # mentioned, not done: no prediction was tested
        return Observation(str(action), ())
    conn = lib.conn
    updates: list[Update] = []
    skipped: list[int] = []
    with transaction(conn):
        action = check_exists(conn, action)
        now = lib.now()
        marks = ",".join("?" * len(PREDICTIVE))
        rows = conn.execute(
            f"SELECT id, relation, dst_kind, dst_id, strength FROM edges WHERE src_kind = ? AND src_id = ? "
            f"AND relation IN ({marks}) AND pruned_at IS NULL ORDER BY id",
            (action.kind, action.id, *PREDICTIVE),
        ).fetchall()
        batch: list[tuple[float, float, float, int, int]] = []
        for edge_id, relation, dst_kind, dst_id, strength in rows:
            target = Node(dst_kind, dst_id)
            if relation == "caused":
                if target in happened_set:
                    r = 1.0
                elif target in absent_set or closed_world:
                    r = 0.0
                else:
                    skipped.append(edge_id)
                    continue
            else:  # prevented
                if target in absent_set:
                    r = 1.0
                elif target in happened_set:
                    r = 0.0
                else:
                    skipped.append(edge_id)
                    continue
            after = clamp_strength(strength + eta * (r - strength))
            batch.append((after, now, now, int(r), edge_id))
            updates.append(Update(edge_id, str(action), relation, str(target), strength, after, r == 1.0))
        conn.executemany(
            "UPDATE edges SET strength = ?, last_verified_at = ?, updated_at = ?, "
            "verifications = verifications + 1, verified_correct = verified_correct + ? WHERE id = ?",
            batch,
        )
    return Observation(str(action), tuple(updates), tuple(skipped))


def neglect(lib: Context, *, since: float, rate: float | None = None) -> int:
    """Edges (``caused``/``prevented``) not verified since ``since`` lose ``λ_neglect`` of their weight.

    Returns how many edges changed. The dream calls it once per cycle with ``since`` = the previous
    cycle's start, so an edge loses confidence once per cycle without evidence, never below the floor.
    """
    if not math.isfinite(since):
        raise InvalidInputError(f"neglect needs a finite since time, got {since}")
    lam = lib.settings.graph_neglect_rate if rate is None else rate
    if not 0.0 <= lam < 1.0:
        raise InvalidInputError("neglect rate must be in [0, 1)")
    if lam == 0.0:
        return 0
    marks = ",".join("?" * len(PREDICTIVE))
    with transaction(lib.conn):
        cur = lib.conn.execute(
            f"UPDATE edges SET strength = max(?, strength * (1 - ?)), updated_at = ? "
            f"WHERE relation IN ({marks}) AND pruned_at IS NULL AND strength > ? "
            f"AND coalesce(last_verified_at, created_at) < ?",
            (STRENGTH_FLOOR, lam, lib.now(), *PREDICTIVE, STRENGTH_FLOOR, since),
        )
    return cur.rowcount
