"""Signals other apps subscribe to (in their ``AppConfig.ready()``); annotation knows none of them.

``item_completed`` is sent once per item, after the transaction that submitted the annotation
reaching the campaign's overlap has committed, with ``sender=Item`` and ``item=<Item>``.
Receivers read ``item.origin`` / ``item.origin_ref`` to find their own rows back and
``item.annotations.filter(status="submitted")`` for the judgments.
"""

from django.dispatch import Signal

item_completed = Signal()
