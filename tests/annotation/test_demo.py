"""``load_demo``: one small campaign per protocol, offline and idempotent."""

from __future__ import annotations

import io

import pytest

from annotation import demo
from annotation.models import Campaign, Item

pytestmark = pytest.mark.django_db


def test_demo_has_each_protocol_and_is_idempotent():
    demo.load_demo(io.StringIO())
    first = sorted(Campaign.objects.values_list("name", "protocol"))
    items = Item.objects.count()
    demo.load_demo(io.StringIO())
    assert sorted(Campaign.objects.values_list("name", "protocol")) == first
    assert Item.objects.count() == items
    assert {protocol for _, protocol in first} == {"esa", "mqm", "choice"}
    assert Item.objects.filter(kind="attention_check").count() == 1
