"""Offline demo data of the lexical app (called by ``manage.py load_demo``; idempotent):
a synthetic corpus with mined concepts; later steps (rules, evaluation) build on it."""

from __future__ import annotations

from lexical.mining import demo as mining_demo


def load_demo(stdout) -> None:
    mining_demo.load(stdout)
