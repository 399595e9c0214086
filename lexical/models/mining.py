"""What a mining job keeps between its rounds (``lexical.mining.services``)."""

from __future__ import annotations

from django.db import models

from lexical.models.concepts import MiningJob


class MiningState(models.Model):
    """The partial result of a mining job, written with each round in the round's transaction,
    so a killed worker re-does at most one chunk. Counts and examples are zlib-compressed JSON
    (``lexical.mining.counting`` / ``examples``): their size follows the vocabularies and the
    concepts found, not the number of pairs."""

    class Phase(models.TextChoices):
        COUNT = "count", "Aligning and counting"
        EXAMPLES = "examples", "Collecting examples"
        DONE = "done", "Done"

    job = models.OneToOneField(
        MiningJob, on_delete=models.CASCADE, primary_key=True, related_name="state"
    )
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.COUNT)
    # The last SentencePair.position this phase has read.
    cursor = models.PositiveIntegerField(default=0)
    counts = models.BinaryField(default=b"")
    # The concepts the filters kept: [[lemma, pos, entropy, [[target, count], ...]], ...].
    concepts = models.JSONField(default=list, blank=True)
    examples = models.BinaryField(default=b"")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"state of mining #{self.job_id} ({self.phase} after {self.cursor})"
