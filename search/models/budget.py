"""What the search app's paid jobs share: one engine-ledger scope and an optional money budget.

A search run, a breaker run and a breaker transfer book every engine call under ``scope`` (the
cost dashboard and ``RoundJob.cost`` sum the ledger by it) and stop once ``cost`` reaches
``budget_money``. Abstract: no table, no migration.
"""

from __future__ import annotations

from typing import ClassVar

from django.db import models

from rounds.models import RoundJob


class BudgetedJob(RoundJob):
    """Abstract: a round job whose engine calls are booked under ``<LEDGER_SCOPE>:<pk>`` and
    may be capped by a money budget."""

    LEDGER_SCOPE: ClassVar[str]

    budget_money = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)

    class Meta(RoundJob.Meta):
        abstract = True

    @property
    def scope(self) -> str:
        """The engine-ledger scope of every call this job makes."""
        return f"{self.LEDGER_SCOPE}:{self.pk}"

    @property
    def money_spent(self) -> bool:
        """Whether the job's money budget (if it has one) is used up."""
        return self.budget_money is not None and self.cost >= self.budget_money
