"""Model evaluation on lexical selection (seed 004 §4): an evaluation of engines over an example
selection, and one answer per (entry, run, example)."""

from __future__ import annotations

from django.db import models

from lexical.models.concepts import ConceptExample, ExampleSelection, Variation
from rounds.models import CountedJob

# Long enough for a reasoning before the answer; an endless one is cut (the answer is parsed
# before storing).
RAW_ANSWER_CHARS = 4000


class LexicalEvaluation(CountedJob):
    """Engines × settings on the examples of one selection, ``runs`` times with a fresh option
    order per run drawn from ``seed``.

    ``entries``: ``[{"engine", "kind": chat|translate, "setting": none|self|other|translate,
    "generator"}]`` (see ``lexical.evaluation.entries``). ``snapshot`` freezes what is asked when
    the evaluation is created, so later edits of concepts or rules do not change it mid-way:
    ``{"concepts": {id: {"lemma", "language", "variations": [{"id", "label", "forms",
    "count"}]}}, "examples": [{"id", "concept", "variation", "source"}], "rules": {generator:
    {concept id: {variation id: rule}}}, "skipped": n}``.
    """

    name = models.CharField(max_length=200, blank=True)
    selection = models.ForeignKey(
        ExampleSelection, on_delete=models.CASCADE, related_name="evaluations"
    )
    entries = models.JSONField(default=list)
    runs = models.PositiveSmallIntegerField(default=3)
    seed = models.BigIntegerField()
    # The paper samples at temperature 0 (§4); stored so the record says what was asked.
    temperature = models.FloatField(default=0.0)
    snapshot = models.JSONField(default=dict)

    def __str__(self) -> str:
        return self.name or f"Evaluation #{self.pk}"

    @property
    def scope(self) -> str:
        return f"lexical_evaluation:{self.pk}"


class LexicalAnswer(models.Model):
    """One engine's choice for one example in one run. ``option_order`` is the variation ids in
    the order shown (empty for a translate engine, which sees no options)."""

    evaluation = models.ForeignKey(
        LexicalEvaluation, on_delete=models.CASCADE, related_name="answers"
    )
    entry_key = models.CharField(max_length=300)
    run = models.PositiveSmallIntegerField()
    example = models.ForeignKey(ConceptExample, on_delete=models.CASCADE, related_name="+")
    option_order = models.JSONField(default=list)
    raw_answer = models.TextField(blank=True)
    chosen = models.ForeignKey(
        Variation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    correct = models.BooleanField(default=False)
    reasked = models.BooleanField(default=False)
    # An engine refusing this one input (permanently); the answer counts as incorrect.
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["evaluation", "entry_key", "run", "id"]
        constraints = [
            # The pending-items query and the guarantee that a re-run round writes nothing twice.
            models.UniqueConstraint(
                fields=["evaluation", "entry_key", "run", "example"],
                name="lexical_answer_unique_cell",
            )
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_id}:{self.entry_key}:{self.run}:{self.example_id}"

    @property
    def chosen_position(self) -> int | None:
        if self.chosen_id is None or self.chosen_id not in self.option_order:
            return None
        return self.option_order.index(self.chosen_id)
