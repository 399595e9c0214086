"""The dashboard's "progress over time" chart on a campaign done in minutes: a visible rise on a
time axis of those minutes (it drew nothing on an axis from 2025 to 2029)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from annotation import charts

T0 = datetime(2027, 3, 4, 10, 15, tzinfo=UTC)


def _tick_labels(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_submissions_minutes_apart_get_an_axis_of_minutes_and_a_visible_line():
    buckets = [(T0, 3), (T0 + timedelta(minutes=2), 2), (T0 + timedelta(minutes=3), 1)]
    svg = charts.progress_over_time(buckets, target=10)
    labels = _tick_labels(svg)
    assert "10:15" in labels and "10:18" in labels
    assert not any(re.search(r"20(2[5-6]|2[8-9])", label) for label in labels)
    assert "time (UTC)" in labels


def test_a_single_minute_of_submissions_still_draws_a_rise_from_zero():
    svg = charts.progress_over_time([(T0, 4)], target=4)
    labels = _tick_labels(svg)
    assert "10:15" in labels and not any("2029" in label for label in labels)
    # The line: from 0 at the first minute up to 4, held to the end of that minute.
    line = re.search(r'<path d="M ([^"]*)"[^>]*style="fill: none; stroke: #1f6feb', svg)
    assert line is not None and len(re.findall(r"[ML] ", "M " + line.group(1))) >= 3
