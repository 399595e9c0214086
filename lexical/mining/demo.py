"""The demo's mined corpus: a synthetic English→Spanish corpus with planted concepts
(``lexical.mining.synthetic``), mined in the foreground with the paper's thresholds.
Idempotent: a second call changes nothing."""

from __future__ import annotations

from lexical.mining.services import run_in_foreground, start_mining
from lexical.mining.synthetic import generate
from lexical.models import MiningJob, ParallelCorpus, SentencePair

DEMO_CORPUS = "Demo: synthetic en→es with planted concepts"
DEMO_PAIRS = 3000
DEMO_SEED = 4


def load(stdout) -> MiningJob:
    """The demo corpus and its finished mining job (created on the first call)."""
    corpus, created = ParallelCorpus.objects.get_or_create(
        name=DEMO_CORPUS,
        defaults={
            "src_lang": "en",
            "tgt_lang": "es",
            "source_format": "jsonl",
            "size": DEMO_PAIRS,
            "description": (
                "SYNTHETIC: word-for-word sentence pairs from lexical.mining.synthetic (seed "
                f"{DEMO_SEED}). Planted concepts (trip, bank, ring, sheet) each have variations "
                "triggered by their own context words; near-misses (glass, key, fan, travesía) "
                "sit just below a threshold."
            ),
        },
    )
    if created:
        SentencePair.objects.bulk_create(
            SentencePair(corpus=corpus, position=i, src=p.src, tgt=p.tgt)
            for i, p in enumerate(generate(DEMO_PAIRS, seed=DEMO_SEED), start=1)
        )
    finished = corpus.mining_jobs.filter(status=MiningJob.Status.FINISHED).first()
    if finished is not None:
        return finished
    job = run_in_foreground(start_mining(corpus, enqueue=False).pk)
    stdout.write(
        f"lexical: corpus {corpus.name!r} ({DEMO_PAIRS} pairs) mined: "
        f"{job.concepts.count()} concepts ({job.status})"
    )
    return job
