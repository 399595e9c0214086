"""An evaluation queued from the API is carried to the end by a real worker process."""

from __future__ import annotations

import pytest

from lexical.evaluation.services import start_lexical_evaluation
from lexical.models import LexicalAnswer, LexicalEvaluation
from tests.engines.conftest import fake_openai  # noqa: F401  (fixture)
from tests.lexical.eval_helpers import make_engines, make_selection, scripted

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_queued_evaluation_is_finished_by_a_worker_in_rounds(
    celery_worker_factory,
    fake_openai,  # noqa: F811
):
    fake_openai.responder = scripted
    make_engines(fake_openai.base_url, "oracle", "mt")
    selection = make_selection()
    # Small rounds, so the worker chains several of them.
    worker = celery_worker_factory(LEXICAL_EVAL_ROUND_ITEMS="4")
    evaluation = start_lexical_evaluation(
        {"selection": selection.pk, "entries": ["oracle:none", "mt:translate"], "runs": 2}
    )

    def finished() -> bool:
        return LexicalEvaluation.objects.get(pk=evaluation.pk).is_finished

    worker.wait_for(finished, timeout=120)
    evaluation.refresh_from_db()
    assert evaluation.status == "finished", evaluation.error
    assert evaluation.items_done == evaluation.items_total == 2 * 5 + 5
    assert evaluation.round_index == 4  # 15 answers in rounds of 4
    assert LexicalAnswer.objects.filter(evaluation=evaluation, correct=True).count() == 10 + 3
