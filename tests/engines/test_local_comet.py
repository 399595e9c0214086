"""COMET checkpoints (CometKiwi ``unified_metric``, COMET-QE ``referenceless_regression_metric``)
as ``local_qe``: tiny checkpoints in COMET's own layout built at test time
(``tests/engines/tiny_comet.py``), created through the form, the API and ``import_engines``,
checked with the Test button, scored in batches and used as a search run's QE, as a user's
``Unbabel/wmt22-cometkiwi-da`` directory would be. That our forward pass equals real COMET's is
measured by ``bench/comet_parity.py`` (ADR 0034)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from engines.interfaces import EngineError
from engines.local_models import loading
from engines.models import CachedResponse, Engine, EngineCall, LocalModelLoad
from engines.registry import resolve
from engines.selectors import queue_for_engines
from engines.services import EngineImportError, import_engines, save_engine
from tests.engines import tiny_comet, tiny_models

pytest.importorskip("torch", reason="the local extra (make test installs it)")
pytest.importorskip("transformers", reason="the local extra (make test installs it)")

pytestmark = pytest.mark.django_db

PAIRS = [
    ("The cat sat on the mat.", "Die Katze sass auf der Matte."),
    ("Hello world", "Hallo Welt"),
    ("The committee postponed its decision until the spring.", "Der Ausschuss vertagte."),
    ("A quick brown fox jumps over the lazy dog.", "El gato se sentó en la alfombra."),
    ("Rare words like sesquipedalian", "Rare words like sesquipedalian"),
]


def _drop(key: str):
    return lambda state: state.pop(key)


def _nan_bias(state) -> None:
    state["estimator.ff.6.bias"].fill_(float("nan"))


@pytest.fixture(scope="session")
def comet_dirs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("comet-models")
    build = tiny_comet.build_comet
    dirs = {
        "kiwi": build(base / "kiwi", tiny_comet.UNIFIED),
        "qe": build(base / "qe", tiny_comet.REFERENCELESS),
        "kiwi-xl": build(base / "kiwi-xl", hparams={"encoder_model": "XLM-RoBERTa-XL"}),
        "nan": build(base / "nan", tiny_comet.UNIFIED, edit_state=_nan_bias),
        "missing": build(base / "missing", edit_state=_drop("estimator.ff.3.bias")),
        "extra": build(
            base / "extra",
            edit_state=lambda s: s.update({"estimator.ff.9.weight": s["estimator.ff.0.weight"]}),
        ),
        "reference": build(base / "reference", hparams={"class_identifier": "regression_metric"}),
        "bad-types": tiny_comet.rewrite_hparams(
            build(base / "bad-types"), layer_norm="yes", hidden_sizes="1,2"
        ),
        "elsewhere": build(base / "elsewhere", encoder_folder="../elsewhere-encoder"),
    }
    # A checkpoint that only a full pickle can read: older Lightning saved hparams as a Namespace.
    import torch

    pickled = build(base / "pickled")
    checkpoint = torch.load(pickled / "checkpoints" / "model.ckpt", weights_only=True)
    checkpoint["hyper_parameters"] = argparse.Namespace(**checkpoint["hyper_parameters"])
    torch.save(checkpoint, pickled / "checkpoints" / "model.ckpt")
    dirs["pickled"] = pickled
    return dirs


def comet_qe(name: str, path: Path, scale: str = "unit", **params) -> Engine:
    params = {"path": str(path), "output_scale": scale, **params}
    return save_engine(
        {"name": name, "kind": "local_qe", "capabilities": ["quality"], "params": params}
    )


def _loaded(path: Path) -> loading.LoadedModel:
    (model,) = [m for m in loading.loaded_models() if m.path == str(path.resolve())]
    return model


# --- creation: form, Test button, page, API, importer ---------------------------------------


def test_an_admin_creates_a_cometkiwi_engine_from_the_form_tests_it_and_sees_the_model(
    admin_client, comet_dirs
):
    response = admin_client.post(
        reverse("engines:create"),
        {"name": "kiwi", "kind": "local_qe", "capabilities": ["quality"],
         "params": json.dumps({"path": str(comet_dirs["kiwi"]), "output_scale": "unit"}),
         "price_in_per_1k": "0", "price_out_per_1k": "0", "max_concurrency": "1",
         "timeout_s": "60", "max_retries": "0", "enabled": "on"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]

    tested = admin_client.post(reverse("engines:test", args=["kiwi"]), HTTP_HX_REQUEST="true")

    assert 'class="badge ok">ok' in tested.content.decode()
    load = LocalModelLoad.objects.get(engine__name="kiwi")
    assert (load.device, load.dtype, load.family) == ("cpu", "float32", "comet-unified")
    model = _loaded(comet_dirs["kiwi"])
    assert load.parameters == sum(p.numel() for p in model.model.parameters())
    assert load.bytes_on_disk == sum(
        f.stat().st_size for f in comet_dirs["kiwi"].rglob("*") if f.is_file()
    )
    assert load.load_ms > 0
    detail = admin_client.get(reverse("engines:detail", args=["kiwi"])).content.decode()
    assert "Model loads" in detail and f"{load.parameters}" in detail
    assert "comet-unified" in detail and "<code>cpu</code>" in detail
    call = EngineCall.objects.get(engine__name="kiwi", scope="engine_check")
    assert (call.operation, call.items, call.cost, call.cache_hit) == ("score", 1, 0, False)


def test_the_api_creates_a_comet_qe_engine_and_it_scores(admin_client, comet_dirs):
    response = admin_client.post(
        "/api/engines/",
        {"name": "qe-api", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(comet_dirs["qe"]), "output_scale": "sigmoid", "format": "comet"}},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 201, response.content.decode()

    scores = resolve("qe-api", "quality").score(PAIRS, "en", "de")

    assert len(scores) == 5 and all(0 < s < 100 for s in scores)
    assert LocalModelLoad.objects.get(engine__name="qe-api").family == "comet-referenceless"


def test_the_api_refuses_a_bad_format_and_a_relative_encoder_path_with_a_400(
    admin_client, comet_dirs
):
    response = admin_client.post(
        "/api/engines/",
        {"name": "q", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(comet_dirs["kiwi"]), "output_scale": "unit",
                    "format": "lightning", "encoder_path": "xlm-roberta-large"}},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 400
    body = response.content.decode()
    assert "format must be one of auto, huggingface, comet" in body
    assert "encoder_path must be an absolute directory path" in body


def test_import_engines_creates_comet_engines_and_names_each_refused_entry(comet_dirs):
    entries = [
        {"name": "kiwi-ok", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(comet_dirs["kiwi"]), "output_scale": "unit"}},
        {"name": "with-ref", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(comet_dirs["reference"]), "output_scale": "unit"}},
        {"name": "typed", "kind": "local_qe", "capabilities": ["quality"],
         "params": {"path": str(comet_dirs["bad-types"]), "output_scale": "unit"}},
    ]  # fmt: skip
    with pytest.raises(EngineImportError) as caught:
        import_engines(entries)
    problems = "\n".join(caught.value.problems)
    assert "with-ref" in problems and "regression, which needs a reference" in problems
    assert "typed" in problems and "layer_norm must be true or false (got 'yes')" in problems
    assert not Engine.objects.exists()  # all or nothing

    import_engines(entries[:1])
    scores = resolve("kiwi-ok", "quality").score(PAIRS[:2], "en", "de")
    assert all(0 <= s <= 100 for s in scores)


# --- scores ------------------------------------------------------------------------------------


def test_batched_scores_equal_one_by_one_and_are_the_unit_mapping_of_the_raw_output(comet_dirs):
    comet_qe("kiwi-batched", comet_dirs["kiwi"], batch_size=2)
    batched = resolve("kiwi-batched", "quality", use_cache=False).score(PAIRS, "en", "de")
    one_by_one = [
        resolve("kiwi-batched", "quality", use_cache=False).score([pair], "en", "de")[0]
        for pair in PAIRS
    ]

    assert batched == pytest.approx(one_by_one, abs=1e-4)
    model = _loaded(comet_dirs["kiwi"]).model
    raw = model.score([s for s, _ in PAIRS], [t for _, t in PAIRS])
    assert batched == pytest.approx([100 * min(max(x, 0), 1) for x in raw], abs=1e-4)
    assert len({round(x, 4) for x in raw}) == len(PAIRS)  # the input matters
    assert LocalModelLoad.objects.filter(engine__name="kiwi-batched").count() == 1
    assert sorted(
        EngineCall.objects.filter(engine__name="kiwi-batched").values_list("items", flat=True)
    ) == [1, 1, 1, 1, 1, 5]


def test_an_xlm_roberta_xl_encoder_loads_and_scores(comet_dirs):
    comet_qe("kiwi-xl", comet_dirs["kiwi-xl"])
    scores = resolve("kiwi-xl", "quality").score(PAIRS, "en", "de")
    assert len(scores) == 5 and all(0 <= s <= 100 for s in scores)
    model = _loaded(comet_dirs["kiwi-xl"]).model
    assert type(model.encoder.model).__name__ == "XLMRobertaXLModel"


def test_an_encoder_config_that_contradicts_encoder_model_is_refused(comet_dirs, tmp_path):
    directory = shutil.copytree(comet_dirs["kiwi-xl"], tmp_path / "xl-called-base")
    tiny_comet.rewrite_hparams(directory, encoder_model="XLM-RoBERTa")
    with pytest.raises(Exception, match="is a 'xlm-roberta-xl' model; the checkpoint's"):
        comet_qe("xl-called-base", directory)


def test_a_second_scoring_comes_from_the_cache(comet_dirs):
    comet_qe("kiwi-cached", comet_dirs["kiwi"], scale="sigmoid")
    first = resolve("kiwi-cached", "quality", scope="a").score(PAIRS[:2], "en", "de")
    again = resolve("kiwi-cached", "quality", scope="b").score(PAIRS[:2], "en", "de")

    assert again == first
    assert EngineCall.objects.get(scope="b").cache_hit is True
    assert CachedResponse.objects.filter(kind="local_qe").count() == 2


def test_the_source_and_the_translation_are_not_interchangeable(comet_dirs):
    comet_qe("kiwi-order", comet_dirs["kiwi"], scale="sigmoid")
    pair = PAIRS[0]
    forward, backward = resolve("kiwi-order", "quality").score(
        [pair, (pair[1], pair[0])], "en", "de"
    )
    assert forward != pytest.approx(backward, abs=1e-6)


def test_hyper_parameters_in_hparams_yaml_alone_are_enough(comet_dirs, tmp_path):
    import torch

    directory = shutil.copytree(comet_dirs["kiwi"], tmp_path / "yaml-only")
    checkpoint = torch.load(directory / "checkpoints" / "model.ckpt", weights_only=True)
    del checkpoint["hyper_parameters"]
    torch.save(checkpoint, directory / "checkpoints" / "model.ckpt")
    comet_qe("yaml-only", directory, scale="sigmoid")
    comet_qe("with-stored", comet_dirs["kiwi"], scale="sigmoid")
    alone = resolve("yaml-only", "quality").score(PAIRS, "en", "de")
    stored = resolve("with-stored", "quality").score(PAIRS, "en", "de")
    assert alone == pytest.approx(stored, abs=1e-6)


def test_the_checkpoint_hyper_parameters_override_hparams_yaml_as_in_comet(comet_dirs, tmp_path):
    directory = shutil.copytree(comet_dirs["kiwi"], tmp_path / "stale-yaml")
    tiny_comet.rewrite_hparams(directory, layer_norm=False)  # the checkpoint says true
    comet_qe("stale-yaml", directory, scale="sigmoid")
    comet_qe("fresh", comet_dirs["kiwi"], scale="sigmoid")
    stale = resolve("stale-yaml", "quality").score(PAIRS, "en", "de")
    assert stale == pytest.approx(resolve("fresh", "quality").score(PAIRS, "en", "de"), abs=1e-6)


def test_a_checkpoint_in_torchs_legacy_format_loads_without_memory_mapping(comet_dirs, tmp_path):
    import torch

    directory = shutil.copytree(comet_dirs["kiwi"], tmp_path / "legacy")
    checkpoint = torch.load(directory / "checkpoints" / "model.ckpt", weights_only=True)
    torch.save(
        checkpoint, directory / "checkpoints" / "model.ckpt", _use_new_zipfile_serialization=False
    )
    comet_qe("legacy", directory, scale="sigmoid")
    comet_qe("zipped", comet_dirs["kiwi"], scale="sigmoid")
    legacy = resolve("legacy", "quality").score(PAIRS, "en", "de")
    assert legacy == pytest.approx(resolve("zipped", "quality").score(PAIRS, "en", "de"))


def test_an_encoder_folder_elsewhere_is_named_with_encoder_path(comet_dirs):
    directory = comet_dirs["elsewhere"]
    with pytest.raises(Exception) as caught:
        comet_qe("no-encoder", directory)
    text = str(caught.value)
    assert f"{directory}/encoder/config.json or {directory}/xlm-roberta-large/config.json" in text
    assert "put its config.json and tokenizer.json in <path>/encoder/ or set encoder_path" in text

    encoder = directory.parent / "elsewhere-encoder"
    comet_qe("encoder-elsewhere", directory, encoder_path=str(encoder))
    assert len(resolve("encoder-elsewhere", "quality").score(PAIRS[:2], "en", "de")) == 2


def test_an_encoder_without_tokenizer_or_of_another_family_is_refused(comet_dirs, tmp_path):
    encoder = tmp_path / "encoder"
    shutil.copytree(comet_dirs["kiwi"] / "encoder", encoder)
    (encoder / "tokenizer.json").unlink()
    config = json.loads((encoder / "config.json").read_text())
    (encoder / "config.json").write_text(json.dumps({**config, "model_type": "bert"}))
    with pytest.raises(Exception) as caught:
        comet_qe("bad-encoder", comet_dirs["kiwi"], encoder_path=str(encoder))
    text = str(caught.value)
    assert "holds no tokenizer.json (the encoder's fast tokenizer" in text
    assert "is a 'bert' model; the checkpoint's encoder_model XLM-RoBERTa needs" in text


def test_the_format_can_be_forced_and_is_then_checked(comet_dirs, tmp_path):
    with pytest.raises(Exception, match=r"holds no config\.json"):
        comet_qe("as-hf", comet_dirs["kiwi"], format="huggingface")
    regressor = tiny_models.build_regressor(tmp_path / "regressor")
    with pytest.raises(Exception, match=r"holds no checkpoints/model.ckpt"):
        comet_qe("as-comet", regressor, format="comet")
    with pytest.raises(Exception, match="input_template does not apply to a COMET checkpoint"):
        comet_qe("templated", comet_dirs["kiwi"], input_template="{source} {translation}")


def test_inspecting_a_comet_directory_imports_no_torch(comet_dirs):
    """Engine creation runs in the web process: the checks read files, never import torch."""
    params = {"path": str(comet_dirs["kiwi"])}
    code = (
        "import sys; from engines.local_models import loading; "
        f"problems = loading.model_dir_problems('local_qe', {params!r}); "
        "sys.exit(3 if problems else 2 if 'torch' in sys.modules else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_sparsemax_without_entmax_is_refused_at_creation(monkeypatch, comet_dirs):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        "engines.local_models.comet.importlib.util.find_spec",
        lambda name, *a: None if name == "entmax" else real(name, *a),
    )
    with pytest.raises(Exception, match="sparsemax, which needs the entmax package"):
        comet_qe("kiwi-no-entmax", comet_dirs["kiwi"])
    comet_qe("qe-softmax", comet_dirs["qe"])  # COMET-QE mixes with softmax: no entmax needed


# --- refused at first call: the checkpoint itself ------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing", "missing from the checkpoint: estimator.ff.3.bias"),
        ("extra", "not in a unified_metric model: estimator.ff.9.weight"),
        ("pickled", "is not a weights-only checkpoint: torch.load(weights_only=True) refused it"),
    ],
)
def test_a_checkpoint_that_does_not_match_is_a_permanent_error_naming_the_problem(
    comet_dirs, name, message
):
    comet_qe(f"bad-{name}", comet_dirs[name])
    with pytest.raises(EngineError) as caught:
        resolve(f"bad-{name}", "quality").score(PAIRS[:1], "en", "de")
    assert caught.value.permanent
    assert message in caught.value.message
    assert not LocalModelLoad.objects.filter(engine__name=f"bad-{name}").exists()


def _old_position_ids(state) -> None:
    import torch

    state["encoder.model.embeddings.position_ids"] = torch.arange(130).expand((1, -1))


def _word_head(state) -> None:
    import torch

    state["hidden2tag.weight"] = torch.zeros(3, 16)
    state["hidden2tag.bias"] = torch.zeros(3)


@pytest.mark.parametrize(
    ("edit", "hparams"),
    [(_old_position_ids, {}), (_word_head, {"word_level_training": True})],
    ids=["position-ids-of-transformers-4.30", "word-level-head"],
)
def test_keys_the_score_does_not_use_are_tolerated(tmp_path, edit, hparams):
    directory = tiny_comet.build_comet(tmp_path / "kiwi", edit_state=edit, hparams=hparams)
    comet_qe("tolerant", directory)
    assert len(resolve("tolerant", "quality").score(PAIRS[:2], "en", "de")) == 2


def test_a_word_level_head_without_word_level_training_is_an_unknown_key(tmp_path):
    directory = tiny_comet.build_comet(tmp_path / "kiwi", edit_state=_word_head)
    comet_qe("stray-head", directory)
    with pytest.raises(EngineError, match=r"not in a unified_metric model: hidden2tag\.bias"):
        resolve("stray-head", "quality").score(PAIRS[:1], "en", "de")


def test_the_pickled_checkpoint_is_never_unpickled(comet_dirs, monkeypatch):
    import torch

    calls = []
    real = torch.load
    monkeypatch.setattr(
        torch, "load", lambda *a, **kw: calls.append(kw.get("weights_only")) or real(*a, **kw)
    )
    comet_qe("pickled", comet_dirs["pickled"])
    with pytest.raises(EngineError):
        resolve("pickled", "quality").score(PAIRS[:1], "en", "de")
    assert calls == [True]


def test_a_nan_score_is_a_permanent_error(comet_dirs):
    comet_qe("kiwi-nan", comet_dirs["nan"])
    with pytest.raises(EngineError) as caught:
        resolve("kiwi-nan", "quality").score(PAIRS[:2], "en", "de")
    assert caught.value.permanent
    assert "the model produced a score that is not a finite number" in caught.value.message


# --- end to end: a search run with CometKiwi as its QE ------------------------------------------


def test_a_search_run_with_a_local_translator_and_cometkiwi_as_qe(
    comet_dirs, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from search.models import Pull
    from tests.engines.local_runs import crowd_search_on_local_models

    nllb = tiny_models.build_nllb(tmp_path / "nllb")
    save_engine(
        {"name": "mt-local", "kind": "local_translator", "capabilities": ["translate"],
         "params": {"path": str(nllb), "max_new_tokens": 8}}
    )  # fmt: skip
    comet_qe("kiwi-qe", comet_dirs["kiwi"])
    save_engine(
        {"name": "crowd", "kind": "artificial_crowd", "capabilities": ["difficulty"],
         "params": {"translators": ["mt-local"], "quality_estimators": ["kiwi-qe"]}}
    )  # fmt: skip
    assert queue_for_engines(["kiwi-qe"]) == "local_models"
    run, queue = crowd_search_on_local_models(monkeypatch, django_capture_on_commit_callbacks)
    assert queue == "local_models"

    assert run.status == "finished" and run.pulls_done == 6
    pull = Pull.objects.filter(run=run).first()
    assert pull.scores[0][:2] == ["mt-local", "kiwi-qe"]
    assert 0 <= pull.automatic_difficulty <= 100
    assert EngineCall.objects.filter(scope=run.scope, engine__name="kiwi-qe").exists()
