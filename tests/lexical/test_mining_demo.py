"""The mining part of ``load_demo``: a synthetic corpus mined to its planted concepts, once."""

from __future__ import annotations

from io import StringIO

import pytest

from lexical import demo
from lexical.mining.demo import DEMO_CORPUS
from lexical.mining.synthetic import expected_concepts
from lexical.models import MiningJob, ParallelCorpus

pytestmark = pytest.mark.django_db


def test_the_demo_mines_the_planted_concepts_once():
    out = StringIO()
    demo.load_demo(out)
    demo.load_demo(out)
    corpus = ParallelCorpus.objects.get(name=DEMO_CORPUS)
    assert corpus.pairs.count() == corpus.size == 3000
    job = MiningJob.objects.get(corpus=corpus)
    mined = {
        c.lemma: {v.lemma: v.count for v in c.variations.all()}
        for c in job.concepts.prefetch_related("variations")
    }
    assert mined == expected_concepts()
    assert out.getvalue().count("mined: 4 concepts") == 1
