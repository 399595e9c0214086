"""Transfer of MT-breaker texts (seed 001 §3.3–3.5, Tables 3–5).

A transfer takes the selected texts of one or several finished breaker runs (typically one
comparison: one run per method or per target) and translates each with other translators into
other target languages, scores every translation with QE engines, and keeps one result per
(text, translator, language). The matrix the pages show (rows: runs; columns: translator ×
language; cells: mean quality) is aggregated from the results when read.
"""

from __future__ import annotations

from django.db import models

from core.validators import validate_string_list
from rounds.models import CountedJob
from search.models.breaker import BreakerChain, BreakerRun
from search.models.budget import BudgetedJob


class BreakerTransfer(BudgetedJob, CountedJob):
    LEDGER_SCOPE = "breaker_transfer"

    name = models.CharField(max_length=200)
    runs = models.ManyToManyField(BreakerRun, related_name="transfers")
    # Engine names and language codes, in the order the matrix shows them.
    translators = models.JSONField(default=list, validators=[validate_string_list])
    languages = models.JSONField(default=list, validators=[validate_string_list])
    qe_engines = models.JSONField(default=list, validators=[validate_string_list])

    def __str__(self) -> str:
        return f"{self.name} (transfer #{self.pk})"

    @property
    def progress(self) -> float:
        return min(1.0, self.items_done / self.items_total) if self.items_total else 1.0


class TransferResult(models.Model):
    """One selected text translated by one translator into one language, scored by QE."""

    transfer = models.ForeignKey(BreakerTransfer, on_delete=models.CASCADE, related_name="results")
    chain = models.ForeignKey(BreakerChain, on_delete=models.CASCADE, related_name="+")
    translator = models.CharField(max_length=100)
    tgt_lang = models.CharField(max_length=16)
    # The chain's selected text when it was translated (the export does not depend on the run).
    source = models.TextField()
    translation = models.TextField(blank=True)
    qe = models.JSONField(default=dict, blank=True)  # {qe engine: score}
    quality = models.FloatField(null=True, blank=True)  # mean over QE engines; null on error
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["transfer", "chain", "translator", "tgt_lang"]
        constraints = [
            # A re-run round never writes a result twice (crash safety rests on this).
            models.UniqueConstraint(
                fields=["transfer", "chain", "translator", "tgt_lang"],
                name="transfer_result_unique_cell",
            ),
        ]

    def __str__(self) -> str:
        cell = f"{self.translator}→{self.tgt_lang}"
        return f"transfer {self.transfer_id} chain {self.chain_id} {cell}"
