"""The offline difficulty demo: synthetic, labelled so, idempotent, with a finished evaluation."""

import io

import pytest

from difficulty import demo
from difficulty.models import DifficultyDataset, DifficultyEvaluation

pytestmark = pytest.mark.django_db


def test_the_demo_is_idempotent_and_labelled_synthetic():
    demo.load_demo(io.StringIO())
    demo.load_demo(io.StringIO())

    dataset = DifficultyDataset.objects.get()
    assert "Synthetic" in dataset.name and "not collected from people" in dataset.description
    assert (dataset.n_segments, dataset.n_language_pairs) == (480, 2)
    evaluation = DifficultyEvaluation.objects.get()
    assert evaluation.status == DifficultyEvaluation.Status.DONE
    dec = {name: r["dec"] for name, r in evaluation.results["estimators"].items()}
    assert dec["oracle-src"] > dec["length"] > 0.1 > abs(dec["random"])
