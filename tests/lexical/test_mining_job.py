"""The mining job on the round kernel: start, rounds in chunks, crash safety, cancel, recovery,
the foreground command, and a real worker."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

import rounds
from lexical.mining import pipeline
from lexical.mining.params import MiningParamsError
from lexical.mining.services import (
    ADVANCE_TASK,
    MiningStateError,
    advance_mining,
    cancel_mining,
    recover_mining,
    run_in_foreground,
    start_mining,
)
from lexical.mining.synthetic import expected_concepts
from lexical.models import Concept, ConceptExample, MiningJob, MiningState, ParallelCorpus
from tests.lexical.mining_support import synthetic_corpus, tiny_corpus

pytestmark = pytest.mark.django_db

# Two rounds per pass over the 2500-pair corpus; eflomal still aligns the planted words exactly.
CHUNK = {"chunk_size": 1300}


def _mined(job: MiningJob) -> dict[str, dict[str, int]]:
    return {
        c.lemma: {v.lemma: v.count for v in c.variations.all()}
        for c in job.concepts.prefetch_related("variations")
    }


def test_start_validates_and_queues_the_first_round_on_commit(
    admin_user, sent_tasks, django_capture_on_commit_callbacks
):
    corpus = tiny_corpus()
    with django_capture_on_commit_callbacks(execute=True):
        job = start_mining(corpus, {"min_variation_count": 2}, created_by=admin_user)
    assert sent_tasks == [(ADVANCE_TASK, (job.pk, 0), {"queue": "slow", "countdown": None})]
    assert job.status == MiningJob.Status.QUEUED and job.items_total == 6
    assert job.params["min_variation_count"] == 2 and job.params["min_entropy"] == 0.69
    assert job.pos_used is False and job.stats == {"polysemy_filter": "off"}
    assert MiningState.objects.get(job=job).phase == MiningState.Phase.COUNT


def test_refused_starts_write_nothing(sent_tasks):
    corpus = tiny_corpus()
    with pytest.raises(MiningParamsError) as caught:
        start_mining(corpus, {"min_entropy": "high"})
    assert "min_entropy" in caught.value.errors
    with pytest.raises(MiningParamsError) as caught:
        start_mining(corpus, {"pos_pipeline": "xx_no_such_pipeline_sm"})
    assert "pos_pipeline" in caught.value.errors
    empty = ParallelCorpus.objects.create(name="empty", src_lang="en", tgt_lang="es")
    with pytest.raises(MiningStateError, match="no sentence pairs"):
        start_mining(empty)
    corpus.status = ParallelCorpus.Status.IMPORTING
    corpus.save()
    with pytest.raises(MiningStateError, match="importing"):
        start_mining(corpus)
    assert not MiningJob.objects.exists() and sent_tasks == []


def test_foreground_mining_writes_the_planted_concepts_with_examples():
    corpus = synthetic_corpus()
    job = run_in_foreground(start_mining(corpus, CHUNK, enqueue=False).pk)
    assert job.status == MiningJob.Status.FINISHED and not job.error
    assert _mined(job) == expected_concepts()
    assert (job.items_done, job.items_total, job.round_index) == (5000, 5000, 4)
    assert job.stats["pairs_read"] == 2500 and job.stats["after_entropy_filter"] == 4
    assert job.stats["concepts_written"] == 4 and job.stats["polysemy_filter"] == "off"
    trip = Concept.objects.get(mining_job=job, lemma="trip")
    assert (trip.pos, trip.origin, trip.src_lang, trip.tgt_lang) == ("", "mined", "en", "es")
    assert trip.total_count == 210 and trip.entropy == pytest.approx(0.692, abs=1e-3)
    viaje = trip.variations.get(lemma="viaje")
    assert viaje.surface_forms == ["viaje", "viajes"] and viaje.label == "viaje/viajes"
    examples = list(ConceptExample.objects.filter(variation=viaje).select_related("pair"))
    assert len(examples) == 100
    assert [e.src_tokens for e in examples] == sorted(
        (e.src_tokens for e in examples), reverse=True
    )
    first = examples[0]
    assert first.pair.src[first.src_start : first.src_end].lower() in {"trip", "trips"}
    assert first.pair.tgt[first.tgt_start : first.tgt_end].lower() in {"viaje", "viajes"}
    assert MiningState.objects.get(job=job).phase == MiningState.Phase.DONE


class Killed(BaseException):
    """Stands in for a worker killed in the middle of a round."""


def test_a_round_killed_mid_chunk_writes_nothing_and_is_redone_once(monkeypatch):
    corpus = synthetic_corpus()
    job = start_mining(corpus, CHUNK, enqueue=False)
    assert advance_mining(job.pk, 0, worker="w1").status is rounds.Status.MORE
    state_before = MiningState.objects.get(job=job)
    counts_before = bytes(state_before.counts)
    real = pipeline.Miner.count_chunk

    def dies(self, chunk, counts):
        real(self, chunk, counts)  # the chunk was counted in memory, then the worker died
        raise Killed

    monkeypatch.setattr(pipeline.Miner, "count_chunk", dies)
    with pytest.raises(Killed):
        advance_mining(job.pk, 1, worker="w1", interrupts=(Killed,))
    job.refresh_from_db()
    state = MiningState.objects.get(job=job)
    assert (job.round_index, job.items_done, job.claimed_by) == (1, 1300, "")
    assert (state.cursor, bytes(state.counts)) == (1300, counts_before)
    monkeypatch.setattr(pipeline.Miner, "count_chunk", real)
    job = run_in_foreground(job.pk, worker="w2")
    assert job.status == MiningJob.Status.FINISHED
    assert job.stats["pairs_read"] == 2500  # the killed chunk was counted once
    assert _mined(job) == expected_concepts()


def test_a_round_whose_lease_was_taken_over_writes_nothing():
    job = start_mining(tiny_corpus(), enqueue=False)
    original = pipeline.Miner.count_chunk

    def taken_over(self, chunk, counts):
        original(self, chunk, counts)
        MiningJob.objects.filter(pk=job.pk).update(claimed_by="other")

    pipeline.Miner.count_chunk = taken_over
    try:
        outcome = advance_mining(job.pk, 0, worker="w1")
    finally:
        pipeline.Miner.count_chunk = original
    assert outcome.status is rounds.Status.STALE
    state = MiningState.objects.get(job=job)
    assert (state.cursor, bytes(state.counts)) == (0, b"")
    assert advance_mining(job.pk, 7, worker="w1").status is rounds.Status.STALE


def test_a_busy_job_and_a_cancelled_one():
    job = start_mining(tiny_corpus(), enqueue=False)
    MiningJob.objects.filter(pk=job.pk).update(
        claimed_by="other", lease_expires_at=timezone.now() + timezone.timedelta(minutes=5)
    )
    assert advance_mining(job.pk, 0, worker="w1").status is rounds.Status.BUSY
    with pytest.raises(MiningStateError, match="worker"):
        run_in_foreground(job.pk)
    cancel_mining(job)
    MiningJob.objects.filter(pk=job.pk).update(claimed_by="", lease_expires_at=None)
    assert advance_mining(job.pk, 0, worker="w1").status is rounds.Status.STOPPED
    job.refresh_from_db()
    assert job.status == MiningJob.Status.CANCELLED and not job.concepts.exists()
    with pytest.raises(MiningStateError, match="cancelled"):
        cancel_mining(job)


def test_a_job_cancelled_during_a_round_stops_at_its_end():
    job = start_mining(tiny_corpus(), {"min_variation_count": 1, "min_entropy": 0}, enqueue=False)
    original = pipeline.Miner.count_chunk

    def cancelled_meanwhile(self, chunk, counts):
        original(self, chunk, counts)
        MiningJob.objects.filter(pk=job.pk).update(status=MiningJob.Status.CANCELLED)

    pipeline.Miner.count_chunk = cancelled_meanwhile
    try:
        outcome = advance_mining(job.pk, 0, worker="w1")
    finally:
        pipeline.Miner.count_chunk = original
    assert outcome.status is rounds.Status.STOPPED
    job.refresh_from_db()
    assert job.status == MiningJob.Status.CANCELLED and not job.concepts.exists()


def test_the_recovery_sweep_requeues_stalled_jobs(sent_tasks, django_capture_on_commit_callbacks):
    job = start_mining(tiny_corpus(), enqueue=False)
    stale = timezone.now() - timezone.timedelta(hours=1)
    MiningJob.objects.filter(pk=job.pk).update(claimed_by="dead", lease_expires_at=stale)
    assert "lexical mining" in rounds.registered()
    with django_capture_on_commit_callbacks(execute=True):
        assert recover_mining() == [job.pk]
    assert sent_tasks == [(ADVANCE_TASK, (job.pk, 0), {"queue": "slow", "countdown": None})]


def test_an_internal_error_fails_the_job_with_its_reason(monkeypatch):
    job = start_mining(tiny_corpus(), enqueue=False)

    def broken(self, chunk, counts):
        raise RuntimeError("aligner exploded")

    monkeypatch.setattr(pipeline.Miner, "count_chunk", broken)
    assert advance_mining(job.pk, 0, worker="w1").status is rounds.Status.STOPPED
    job.refresh_from_db()
    assert job.status == MiningJob.Status.FAILED and "aligner exploded" in job.error


# --- the management command -------------------------------------------------------------------


def test_the_command_mines_in_the_foreground_and_prints_json():
    synthetic_corpus(name="demo corpus")
    out = StringIO()
    call_command(
        "mine_concepts", "demo corpus", "--foreground", "--json",
        "--param", "chunk_size=1300", "--param", "max_examples=5", stdout=out,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert result["status"] == "finished"
    assert {c["lemma"]: c["variations"] for c in result["concepts"]} == expected_concepts()
    assert result["stats"]["examples_written"] == 8 * 5


def test_the_command_queues_by_default_and_refuses_bad_input(
    sent_tasks, django_capture_on_commit_callbacks
):
    corpus = tiny_corpus()
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("mine_concepts", str(corpus.pk), stdout=out)
    assert "queued" in out.getvalue() and len(sent_tasks) == 1
    with pytest.raises(CommandError, match="no corpus"):
        call_command("mine_concepts", "nope")
    with pytest.raises(CommandError, match="min_variations"):
        call_command("mine_concepts", "tiny", "--param", "min_variations=1")
    with pytest.raises(CommandError, match="NAME=VALUE"):
        call_command("mine_concepts", "tiny", "--param", "oops")
    assert MiningJob.objects.count() == 1


# --- a real worker ----------------------------------------------------------------------------


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_carries_a_mining_job_to_the_end(celery_worker):
    corpus = synthetic_corpus()
    job = start_mining(corpus, CHUNK)
    celery_worker.wait_for(lambda: MiningJob.objects.get(pk=job.pk).is_finished, timeout=240)
    job.refresh_from_db()
    assert job.status == MiningJob.Status.FINISHED, job.error
    assert _mined(job) == expected_concepts()
