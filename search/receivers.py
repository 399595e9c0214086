"""Signal connections of the search app, made in ``SearchConfig.ready``."""

from __future__ import annotations

import logging

from celery.signals import worker_ready

from annotation.signals import item_completed

logger = logging.getLogger(__name__)


def _recover_after_restart(sender=None, **kwargs) -> None:
    """A worker starting under a node name owns nothing yet: claims that carry the name were
    its dead predecessor's, so their rounds are queued again at once (not after the lease)."""
    from search.run_services import recover_runs

    hostname = getattr(sender, "hostname", "") or ""
    try:
        recovered = recover_runs(dead_worker_prefix=f"{hostname}:" if hostname else None)
    except Exception:  # recovery must never stop a worker from starting; the sweep retries
        logger.exception("search run recovery at worker start failed")
        return
    if recovered:
        logger.info("search runs recovered at worker start: %s", recovered)


def connect() -> None:
    from search.human_loop import on_item_completed

    item_completed.connect(on_item_completed, dispatch_uid="search.human_loop")
    worker_ready.connect(_recover_after_restart, dispatch_uid="search.recover_runs", weak=False)
