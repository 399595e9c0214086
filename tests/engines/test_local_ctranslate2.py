"""CTranslate2 translators (``local_translator``, backend ctranslate2): the tiny Marian and NLLB
models of ``tests/engines/tiny_models.py`` converted at test time with CTranslate2's own
converter, compared with the transformers backend on the same weights, created through the
form, the API and ``import_engines``, checked with the Test button and used by a search run and
an MT-breaker run."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from engines.interfaces import EngineError
from engines.local_models import ctranslate2_backend, loading
from engines.models import Engine, EngineCall, LocalModelLoad
from engines.registry import resolve
from engines.services import EngineImportError, import_engines, save_engine
from tests.engines import tiny_models

pytest.importorskip("torch", reason="the local extra (make test installs it)")
pytest.importorskip("transformers", reason="the local extra (make test installs it)")
pytest.importorskip("ctranslate2", reason="the local extra (make test installs it)")

pytestmark = pytest.mark.django_db

TEXTS = [
    "The cat sat on the mat.",
    "Hello world",
    "A quick brown fox jumps over the lazy dog.",
    "The committee postponed its decision until the spring.",
    "Die Katze sass auf der Matte.",
    "Rare words like sesquipedalian",
]


# Larger than tiny_models.TINY: at 16 dimensions a random model says the same thing whatever the
# source and target, which would make the comparison with transformers vacuous.
DIMS = tiny_models.Dims(d_model=64, layers=2, heads=4, ffn=128)


@pytest.fixture(scope="session")
def dirs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("ct2-models")
    marian = tiny_models.build_marian(base / "marian", DIMS)
    nllb = tiny_models.build_nllb(base / "nllb", DIMS)
    m2m100 = tiny_models.build_m2m100(base / "m2m100", DIMS)
    no_tokenizer = tiny_models.convert_to_ctranslate2(
        marian, base / "marian-ct2-bare", copy_files=()
    )
    return {
        "marian": marian,
        "nllb": nllb,
        "marian-ct2": tiny_models.convert_to_ctranslate2(marian, base / "marian-ct2"),
        "nllb-ct2": tiny_models.convert_to_ctranslate2(nllb, base / "nllb-ct2"),
        "m2m100": m2m100,
        "m2m100-ct2": tiny_models.convert_to_ctranslate2(m2m100, base / "m2m100-ct2"),
        "bare": no_tokenizer,
    }


def translator(name: str, path: Path, **params) -> Engine:
    params = {"path": str(path), "max_new_tokens": 8, **params}
    return save_engine(
        {"name": name, "kind": "local_translator", "capabilities": ["translate"], "params": params}
    )


# --- the same translations as transformers ---------------------------------------------------


@pytest.mark.parametrize(
    ("family", "pairs"),
    [
        ("marian", [("en", "de")]),
        ("nllb", [("en", "de"), ("en", "cs"), ("de", "en")]),
        ("m2m100", [("en", "de"), ("en", "fr"), ("de", "en")]),
    ],
)
def test_greedy_ctranslate2_output_equals_transformers_on_the_same_weights(dirs, family, pairs):
    extra = {"family": "marian"} if family == "marian" else {}
    translator(f"{family}-hf", dirs[family], batch_size=4)
    translator(f"{family}-ct2", dirs[f"{family}-ct2"], batch_size=4, **extra)

    outputs = set()
    for src, tgt in pairs:
        reference = resolve(f"{family}-hf", "translate", use_cache=False).translate(TEXTS, src, tgt)
        ours = resolve(f"{family}-ct2", "translate", use_cache=False).translate(TEXTS, src, tgt)
        assert ours == reference, (src, tgt)
        outputs.update(reference)
    # Not vacuous: the outputs differ with the source (Marian) or the target language (NLLB).
    assert len(outputs) > 1 and all(outputs)
    load = LocalModelLoad.objects.get(engine__name=f"{family}-ct2")
    assert (load.device, load.dtype, load.family) == ("cpu", "ct2:float32", family)


def test_batched_equals_one_by_one_and_the_model_loads_once(dirs):
    translator("ct2-batched", dirs["nllb-ct2"], batch_size=4)
    batched = resolve("ct2-batched", "translate", use_cache=False).translate(TEXTS, "en", "de")
    one_by_one = [
        resolve("ct2-batched", "translate", use_cache=False).translate([text], "en", "de")[0]
        for text in TEXTS
    ]

    assert batched == one_by_one
    assert LocalModelLoad.objects.filter(engine__name="ct2-batched").count() == 1
    calls = EngineCall.objects.filter(engine__name="ct2-batched")
    assert sorted(calls.values_list("items", flat=True)) == [1, 1, 1, 1, 1, 1, 6]
    assert all(c.cost == 0 and c.latency_ms > 0 for c in calls)
    stored = resolve("ct2-batched", "translate", scope="first").translate(TEXTS, "en", "de")
    cached = resolve("ct2-batched", "translate", scope="again").translate(TEXTS, "en", "de")
    assert stored == cached == batched
    assert EngineCall.objects.get(scope="again").cache_hit


def test_an_unknown_language_is_a_permanent_error_naming_the_token(dirs):
    translator("ct2-fr", dirs["nllb-ct2"])
    with pytest.raises(EngineError) as caught:
        resolve("ct2-fr", "translate").translate(["Hello world"], "en", "fr")
    assert caught.value.permanent and "has no language token 'fra_Latn'" in caught.value.message


# --- creation: form, Test button, page, API, importer ----------------------------------------


def test_an_admin_creates_a_ct2_translator_from_the_form_and_tests_it(admin_client, dirs):
    response = admin_client.post(
        reverse("engines:create"),
        {
            "name": "nllb-ct2",
            "kind": "local_translator",
            "capabilities": ["translate"],
            "params": json.dumps({"path": str(dirs["nllb-ct2"]), "max_new_tokens": 6}),
            "price_in_per_1k": "0",
            "price_out_per_1k": "0",
            "max_concurrency": "1",
            "timeout_s": "60",
            "max_retries": "0",
            "enabled": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]

    tested = admin_client.post(reverse("engines:test", args=["nllb-ct2"]), HTTP_HX_REQUEST="true")

    assert 'class="badge ok">ok' in tested.content.decode()
    load = LocalModelLoad.objects.get(engine__name="nllb-ct2")
    (model,) = [m for m in loading.loaded_models() if m.path == str(dirs["nllb-ct2"].resolve())]
    assert model.backend == "ctranslate2"
    assert load.parameters == ctranslate2_backend.count_parameters(dirs["nllb-ct2"] / "model.bin")
    assert ctranslate2_backend.read_model_bin(dirs["nllb-ct2"] / "model.bin")[1] == 128
    assert load.bytes_on_disk == sum(f.stat().st_size for f in dirs["nllb-ct2"].iterdir())
    detail = admin_client.get(reverse("engines:detail", args=["nllb-ct2"])).content.decode()
    assert "<code>ct2:float32</code>" in detail and "nllb" in detail
    call = EngineCall.objects.get(engine__name="nllb-ct2", scope="engine_check")
    assert (call.operation, call.items, call.cost) == ("translate", 1, 0)


def test_the_api_creates_one_and_refuses_a_directory_without_a_tokenizer(admin_client, dirs):
    created = admin_client.post(
        "/api/engines/",
        {"name": "api-ct2", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(dirs["nllb-ct2"]), "backend": "ctranslate2"}},
        content_type="application/json",
    )  # fmt: skip
    assert created.status_code == 201, created.content.decode()

    refused = admin_client.post(
        "/api/engines/",
        {"name": "bare", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(dirs["bare"]), "family": "marian"}},
        content_type="application/json",
    )  # fmt: skip
    assert refused.status_code == 400
    text = refused.content.decode()
    assert "holds no Hugging Face tokenizer" in text and "--copy_files" in text
    assert not Engine.objects.filter(name="bare").exists()


def test_import_engines_names_each_bad_ct2_entry(dirs, tmp_path):
    no_model = tmp_path / "no-model"
    shutil.copytree(dirs["nllb-ct2"], no_model)
    (no_model / "model.bin").unlink()
    entries = [
        {"name": "ok", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(dirs["nllb-ct2"])}},
        {"name": "bare", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(dirs["bare"]), "family": "marian"}},
        {"name": "forced", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(no_model), "backend": "ctranslate2"}},
        {"name": "guess", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(dirs["marian-ct2"])}},
    ]  # fmt: skip
    with pytest.raises(EngineImportError) as caught:
        import_engines(entries)
    problems = "\n".join(caught.value.problems)
    assert "bare" in problems and "holds no Hugging Face tokenizer" in problems
    assert "forced" in problems and "holds no CTranslate2 model (model.bin)" in problems
    assert "guess" in problems and "family auto cannot tell the family of a CTranslate2" in problems
    assert not Engine.objects.exists()

    import_engines(entries[:1])
    assert Engine.objects.get(name="ok").params["path"] == str(dirs["nllb-ct2"])


def test_tokenizer_path_points_at_the_original_directory_and_tells_the_family(dirs):
    translator("marian-split", dirs["bare"], tokenizer_path=str(dirs["marian"]))
    translator("marian-hf", dirs["marian"])

    ours = resolve("marian-split", "translate").translate(TEXTS, "en", "de")

    assert ours == resolve("marian-hf", "translate").translate(TEXTS, "en", "de")
    assert LocalModelLoad.objects.get(engine__name="marian-split").family == "marian"


def test_a_missing_ctranslate2_is_refused_at_creation(monkeypatch, dirs):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        loading.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ctranslate2" else real(name, *a),
    )
    with pytest.raises(Exception, match=r"missing: ctranslate2\); install it with"):
        translator("no-ct2", dirs["nllb-ct2"])
    assert not Engine.objects.exists()


def test_parameters_that_only_apply_to_ctranslate2_are_refused_on_transformers(dirs):
    with pytest.raises(Exception) as caught:
        translator(
            "mixed", dirs["nllb"], backend="transformers", compute_type="int8", tokenizer_path="x"
        )
    text = str(caught.value)
    assert "compute_type only applies to a CTranslate2 model" in text
    assert "tokenizer_path must be an absolute directory path" in text
    with pytest.raises(Exception, match="backend must be one of auto, transformers, ctranslate2"):
        translator("onnx", dirs["nllb"], backend="onnx")
    with pytest.raises(Exception, match="holds no CTranslate2 model"):
        translator("hf-as-ct2", dirs["nllb"], backend="ctranslate2")
    with pytest.raises(Exception, match="compute_type: only a CTranslate2 model takes it"):
        translator("auto-hf", dirs["nllb"], compute_type="int8")
    with pytest.raises(Exception, match="it holds a CTranslate2 model: use backend auto"):
        translator("ct2-as-hf", dirs["nllb-ct2"], backend="transformers")


def test_inspecting_a_ct2_directory_imports_neither_ctranslate2_nor_torch(dirs):
    """The web process validates engines without the heavy packages (a fresh interpreter: this
    one has imported them already)."""
    params = {"path": str(dirs["nllb-ct2"])}
    script = (
        "import sys\n"
        "from engines.local_models import loading\n"
        f"print(loading.model_dir_problems('local_translator', {params!r}))\n"
        "print(sorted(m for m in ('torch', 'ctranslate2', 'transformers') if m in sys.modules))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[:2] == ["[]", "[]"]


def test_int8_runs_and_an_unsupported_compute_type_is_a_permanent_error(dirs):
    translator("ct2-int8", dirs["nllb-ct2"], compute_type="int8")
    assert len(resolve("ct2-int8", "translate").translate(TEXTS[:2], "en", "de")) == 2
    # int8 on CPU: int8 weights, float32 activations, as CTranslate2 reports it.
    assert LocalModelLoad.objects.get(engine__name="ct2-int8").dtype == "ct2:int8_float32"
    translator("ct2-auto", dirs["nllb-ct2"], compute_type="auto")
    resolve("ct2-auto", "translate").translate(TEXTS[:1], "en", "de")
    shown = LocalModelLoad.objects.get(engine__name="ct2-auto").dtype
    assert shown.startswith("ct2:") and shown != "ct2:auto"  # what CTranslate2 chose

    import ctranslate2

    if "float16" in ctranslate2.get_supported_compute_types("cpu"):
        pytest.skip("this CPU runs float16")
    translator("ct2-half", dirs["nllb-ct2"], dtype="float16")
    with pytest.raises(EngineError) as caught:
        resolve("ct2-half", "translate").translate(["Hello"], "en", "de")
    assert caught.value.permanent
    assert "compute type float16 is not supported by CTranslate2 on cpu" in caught.value.message


def test_a_cuda_device_without_cuda_is_a_permanent_error(dirs):
    import ctranslate2

    if ctranslate2.get_cuda_device_count():
        pytest.skip("this machine has CUDA")
    translator("ct2-cuda", dirs["nllb-ct2"], device="cuda")
    with pytest.raises(EngineError) as caught:
        resolve("ct2-cuda", "translate").translate(["Hello"], "en", "de")
    assert caught.value.permanent and "CTranslate2 sees 0 CUDA device(s)" in caught.value.message


# --- end to end -------------------------------------------------------------------------------


def test_a_search_run_with_a_ct2_translator_in_its_crowd(
    dirs, tmp_path_factory, monkeypatch, django_capture_on_commit_callbacks
):
    from search.models import Pull
    from tests.engines.local_runs import crowd_search_on_local_models

    regressor = tiny_models.build_regressor(tmp_path_factory.mktemp("qe") / "regressor")
    translator("mt-ct2", dirs["nllb-ct2"])
    save_engine(
        {"name": "qe-local", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(regressor), "output_scale": "metricx"}}
    )  # fmt: skip
    save_engine(
        {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
         "params": {"translators": ["mt-ct2"], "quality_estimators": ["qe-local"]}}
    )  # fmt: skip
    run, queue = crowd_search_on_local_models(monkeypatch, django_capture_on_commit_callbacks)
    assert queue == "local_models"

    assert (run.status, run.pulls_done) == ("finished", 6), run.error
    pull = Pull.objects.filter(run=run).first()
    assert set(pull.translations) == {"mt-ct2"}
    assert run.cost == 0
    assert EngineCall.objects.filter(scope=run.scope, engine__name="mt-ct2").exists()


def test_a_ct2_translator_as_an_mt_breaker_target(
    dirs, tmp_path_factory, sent_tasks, django_capture_on_commit_callbacks
):
    from search.breaker.services import run_in_foreground, start_breaker_run
    from tests.search.breaker_helpers import offline_config

    regressor = tiny_models.build_regressor(tmp_path_factory.mktemp("qe") / "regressor")
    translator("mt-target", dirs["marian-ct2"], family="marian")
    save_engine(
        {"name": "qe-target", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(regressor), "output_scale": "metricx"}}
    )  # fmt: skip
    config = offline_config(n_steps=2, targets=["mt-target"], qe=["qe-target"], tgt_lang="de")
    with django_capture_on_commit_callbacks(execute=True):
        run = start_breaker_run(config)
    assert [options["queue"] for _name, _args, options in sent_tasks] == ["local_models"]

    run = run_in_foreground(run.pk)

    assert run.status == "finished", run.error
    step = run.chains.first().steps.order_by("index").last()
    assert set(step.translations) == {"mt-target"} and 0 <= step.quality <= 100
    assert EngineCall.objects.filter(scope=run.scope, engine__name="mt-target").exists()
