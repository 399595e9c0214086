"""The number an annotator knows an item by: its id made opaque (``core.opaque_ids``).

Item ids come in the order items were created, and attention checks generated for a campaign
are created after its items: an annotator who saw ids could tell a check from an item by its
id alone. So every address and payload an annotator handles (the annotate page and its
endpoints, next-item, their items and annotations in the API, a submission's ``item``) carries
the item's reference, a keyed permutation of its id (key derived from ``SECRET_KEY``); staff
views keep the ids. A reference is read back without a query; a number that is not one is a
404, as for an item that does not exist. Changing ``SECRET_KEY`` changes every reference:
next-item hands an annotator their open item again under its new one.
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.utils.crypto import salted_hmac

from core import opaque_ids

_SALT = "hardset.annotation.item_refs"


@functools.lru_cache(maxsize=4)
def _key(secret: str) -> bytes:
    return salted_hmac(_SALT, "item reference key", secret=secret).digest()


def item_ref(item_id: int) -> int:
    """The reference annotators know the item ``item_id`` by."""
    return opaque_ids.to_opaque(item_id, _key(settings.SECRET_KEY))


def item_id(reference: object) -> int | None:
    """The id of the item a reference from a request names; ``None`` when it names none (not
    a number, or a number that is no reference)."""
    try:
        number = int(str(reference))
    except ValueError:  # not a number, or over Python's digit limit for int()
        return None
    return opaque_ids.from_opaque(number, _key(settings.SECRET_KEY))


class ItemRefConverter:
    """``<item_ref:item_id>`` in a URL: the view gets the item's id, ``reverse()`` takes the
    id and writes its reference; anything else does not match (404)."""

    regex = "[0-9]{1,20}"

    def to_python(self, value: str) -> int:
        found = item_id(value)
        if found is None:
            raise ValueError("not an item reference")
        return found

    def to_url(self, value: int) -> str:
        return str(item_ref(int(value)))
