"""The corpus and concept pages in headless Chromium: the marked words are highlighted, and
dropping a variation with htmx swaps the editor in place. Set ``LEXICAL_SCREENSHOTS`` to a
folder to keep screenshots of both pages."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from lexical.corpora.services import CorpusSource, import_corpus_pairs
from tests.core.test_offline_pages_browser import offline_page
from tests.factories import UserFactory
from tests.lexical.factories import (
    ConceptExampleFactory,
    ConceptFactory,
    MiningJobFactory,
    VariationFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAIRS = [
    ("The trip to the coast was long.", "El viaje a la costa fue largo."),
    (
        "We took a short trip around the old town.",
        "Hicimos un recorrido corto por el casco antiguo.",
    ),
    ("Their trip through Europe lasted a month.", "Su viaje por Europa duró un mes."),
    (
        "A guided trip of the museum starts at ten.",
        "El recorrido guiado del museo empieza a las diez.",
    ),
]


def _screenshot(page, name: str) -> None:
    folder = os.environ.get("LEXICAL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def test_corpus_and_concept_pages(browser, live_server):
    UserFactory(username="staff", is_staff=True)
    data = "".join(f"{en}\t{es}\n" for en, es in PAIRS).encode()
    corpus = import_corpus_pairs(
        CorpusSource(format="tsv", file=io.BytesIO(data), file_name="demo.tsv"),
        name="OPUS sample en-es",
        src_lang="en",
        tgt_lang="es",
        description="Four aligned pairs from a TSV file.",
    )
    concept = ConceptFactory(
        mining_job=MiningJobFactory(corpus=corpus), lemma="trip", total_count=100, entropy=0.611
    )
    viaje = VariationFactory(concept=concept, lemma="viaje", surface_forms=["viaje"], count=60)
    recorrido = VariationFactory(
        concept=concept, lemma="recorrido", surface_forms=["recorrido"], count=40
    )
    for pair in corpus.pairs.order_by("position"):
        variation = viaje if "viaje" in pair.tgt else recorrido
        word = variation.lemma
        ConceptExampleFactory(
            variation=variation, pair=pair,
            src_start=pair.src.index("trip"), src_end=pair.src.index("trip") + 4,
            tgt_start=pair.tgt.index(word), tgt_end=pair.tgt.index(word) + len(word),
        )  # fmt: skip

    page, outside = offline_page(browser, live_server, "staff")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/lexical/corpora/{corpus.pk}/")
    assert "OPUS sample en-es" in page.inner_text("h1")
    assert page.locator("#pairs tbody tr").count() == 4
    _screenshot(page, "corpus.png")

    page.goto(f"{live_server.url}/lexical/concepts/{concept.pk}/")
    marks = page.locator("#editor mark").all_inner_texts()
    assert sorted(set(marks)) == ["recorrido", "trip", "viaje"] and len(marks) == 8
    _screenshot(page, "concept.png")
    page.locator(f"#variation-{recorrido.pk} button", has_text="Drop").click()
    page.wait_for_selector("text=Dropped recorrido.")
    assert page.locator(f"#variation-{recorrido.pk} .badge", has_text="dropped").count() == 1
    recorrido.refresh_from_db()
    assert recorrido.dropped
    assert outside == []
