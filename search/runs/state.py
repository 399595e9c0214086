"""Where a search run's bandit policy lives between rounds (issue 19).

Stored: ``SearchRun.policy_state`` holds the policy without its per-topic rows
(``Policy.header_to_dict``: totals, generator, the method's own small state), a count of
``PolicyChanges`` rows and a token new at every save; each save appends one ``PolicyChanges``
row with the statistics of the topics changed since the previous save. A round therefore writes
O(batch), whatever the number of pulls the run has already made, in the transaction that writes
its pulls: a killed worker leaves no half-saved state, and a round that did not commit left no
row behind.

Kept: the process that committed a round keeps its policy in memory, under the token it saved.
The next round of that run in the same process takes it back when the stored token still
matches (nothing else saved the run since), so it neither replays the rows nor rebuilds the
method's candidate sets and prior tables; on any other worker, after a restart, or when another
process saved the run in between, the policy is rebuilt from storage, and the two are identical
(``search.bandit.policy_from_parts``, pinned by ``tests/search/test_run_pins.py``). A policy is
handed back to the memory only once its round has committed (``transaction.on_commit``): a
round that fails or loses its lease drops its copy.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from threading import Lock
from typing import Any

from django.db import transaction

from search.bandit import Policy, policy_from_dict, policy_from_parts
from search.models import PolicyChanges, SearchRun

__all__ = ["forget_kept", "load_policy", "policy_for_round", "save_policy", "state_size"]

# Policies kept per process: a worker alternating between a few runs still hits; each holds a
# few bytes per topic of its run (about 30 MB at 1M topics).
KEPT_RUNS = 4

_kept: OrderedDict[int, tuple[str, Policy]] = OrderedDict()
_kept_lock = Lock()


def load_policy(run: SearchRun) -> Policy:
    """The run's policy rebuilt from storage (pages, exports, recovery): never the kept one."""
    state = run.policy_state
    if state.get("stats_rows") != "changes":
        return policy_from_dict(state)  # a state saved whole, before issue 19
    rows = PolicyChanges.objects.filter(run_id=run.pk).order_by("seq")
    return policy_from_parts(state, rows.values_list("rows", flat=True).iterator(chunk_size=64))


def policy_for_round(run: SearchRun) -> Policy:
    """The policy a round (or a settle) will change and save: the one this process kept when
    it saved the run last, else rebuilt from storage. The caller owns it until it saves."""
    token = run.policy_state.get("token")
    with _kept_lock:
        kept = _kept.pop(run.pk, None)
    if kept is not None and token is not None and kept[0] == token:
        return kept[1]
    policy = load_policy(run)
    policy.stats.track_changes()
    if run.policy_state.get("stats_rows") != "changes":
        policy.stats.take_changes()  # a whole state: its first save writes every row instead
    return policy


def save_policy(run: SearchRun, policy: Policy, *, keep: bool = True) -> None:
    """Store what changed in ``policy`` (one row) and its header in ``run.policy_state``; the
    caller saves ``run`` in the same transaction (``run`` must have a primary key). ``keep``:
    hand the policy to this process's memory once the transaction commits."""
    policy.stats.track_changes()
    state = run.policy_state or {}
    rows: dict[str, Any] | None
    if state and state.get("stats_rows") != "changes":
        rows = policy.stats.to_dict()  # the first save of a whole state: every row, once
        policy.stats.take_changes()
        seq = 0
    else:
        rows = policy.stats.take_changes()
        seq = int(state.get("changes", 0))
    if rows is not None:
        PolicyChanges.objects.create(run_id=run.pk, seq=seq, rows=rows)
        seq += 1
    token = secrets.token_hex(8)
    run.policy_state = {**policy.header_to_dict(), "changes": seq, "token": token}
    if keep:
        run_id = run.pk
        transaction.on_commit(lambda: _keep(run_id, token, policy))


def _keep(run_id: int, token: str, policy: Policy) -> None:
    with _kept_lock:
        _kept[run_id] = (token, policy)
        _kept.move_to_end(run_id)
        while len(_kept) > KEPT_RUNS:
            _kept.popitem(last=False)


def forget_kept() -> None:
    """Drop every kept policy (tests; a process that wants its memory back)."""
    with _kept_lock:
        _kept.clear()


def state_size(run: SearchRun) -> int:
    """Bytes of the run's stored state as JSON text: header plus every row."""
    rows = PolicyChanges.objects.filter(run_id=run.pk).values_list("rows", flat=True)
    return len(json.dumps(run.policy_state)) + sum(len(json.dumps(r)) for r in rows.iterator())
