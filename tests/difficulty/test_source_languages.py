"""Word-based estimators on Chinese and Japanese sources, and refusals before anything runs."""

from __future__ import annotations

import json

import pytest
import wordfreq

from difficulty import services
from difficulty.models import DifficultyDataset, DifficultyEvaluation
from engines import heuristics

pytestmark = pytest.mark.django_db

SOURCES = {
    "zh-en": ["我们今天去北京。", "这个问题非常复杂，需要仔细研究。", "他喜欢喝茶。"],
    "ja-en": ["東京都に住んでいます。", "猫が好きです。", "量子力学の解釈は難しい。"],
}


def dataset_of(tmp_path, sources: dict[str, list[str]], name: str) -> DifficultyDataset:
    rows = [
        {"langs": langs, "line_id": i, "src": text, "scores": {"a": 10.0 * i, "b": 90.0 - i}}
        for langs, texts in sources.items()
        for i, text in enumerate(texts)
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    with path.open("rb") as lines:
        return services.import_difficulty_dataset(lines, name=name)


def test_chinese_and_japanese_are_split_into_words():
    assert wordfreq.tokenize("我们今天去北京", "zh") == ["我们", "今天", "去", "北京"]
    assert heuristics.token_count("我们今天去北京", "zh") == 4
    assert heuristics.token_count("猫が好きです", "ja") == 4  # 猫 / が / 好き / です
    assert heuristics.words_available("zh", frequencies=True)
    assert heuristics.words_available("ja", frequencies=True)
    # A common word is more frequent than a rare one in both languages.
    assert heuristics.word_rarity("我们", "zh") > heuristics.word_rarity("量子", "zh")
    assert heuristics.word_rarity("猫", "ja") > heuristics.word_rarity("量子", "ja")


def test_length_and_rarity_evaluate_chinese_and_japanese_sources(tmp_path):
    dataset = dataset_of(tmp_path, SOURCES, "cjk")

    evaluation = services.start_difficulty_evaluation(
        dataset, ["length", "rarity"], enqueue=False, n_bootstrap=0
    )
    evaluation = services.run_difficulty_evaluation(evaluation.pk)

    assert evaluation.status == DifficultyEvaluation.Status.DONE, evaluation.error
    assert set(evaluation.results["estimators"]) == {"length", "rarity"}


def test_rarity_is_refused_before_anything_runs_without_a_word_list(tmp_path):
    dataset = dataset_of(tmp_path, {"tlh-en": ["nuqneH", "Qapla'"]}, "klingon")

    with pytest.raises(services.DifficultyDatasetError) as error:
        services.start_difficulty_evaluation(dataset, ["rarity"], enqueue=False)

    assert str(error.value) == (
        "estimator 'rarity' is unavailable for source language tlh: wordfreq has no word list "
        "for language 'tlh' (leave 'rarity' out)"
    )
    assert not DifficultyEvaluation.objects.exists()


def test_length_is_refused_when_the_tokenizer_module_is_missing(tmp_path, monkeypatch):
    dataset = dataset_of(tmp_path, {"zh-en": SOURCES["zh-en"]}, "zh-only")

    def tokenize_without_jieba(text, lang):
        raise ModuleNotFoundError("No module named 'jieba'", name="jieba")

    monkeypatch.setattr(wordfreq, "tokenize", tokenize_without_jieba)
    heuristics.words_unavailable_reason.cache_clear()
    try:
        with pytest.raises(services.DifficultyDatasetError, match="optional module 'jieba'"):
            services.start_difficulty_evaluation(dataset, ["length"], enqueue=False)
    finally:
        heuristics.words_unavailable_reason.cache_clear()

    assert not DifficultyEvaluation.objects.exists()
