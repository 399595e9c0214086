"""Do our COMET scores equal real COMET's? Tiny checkpoints scored by both, max |difference|.

``engines/local_models/comet_model.py`` re-implements the forward pass of COMET's
reference-free models because ``unbabel-comet`` cannot be installed beside numpy 2 and
transformers 5. This script checks it against the real thing, once, outside the project's venv:

1. builds tiny COMET checkpoints of both classes and several head variants with the test helper
   (``tests/engines/tiny_comet.py``: COMET's layout, a tiny XLM-R encoder config + tokenizer,
   random weights), ``pretrained_model`` pointing at the encoder folder;
2. scores a few (source, translation) pairs with our reader, in this interpreter;
3. scores the same pairs with ``comet.load_from_checkpoint(..., strict=True,
   local_files_only=True).predict(...)`` in a side venv, through a subprocess;
4. prints each variant's max |ours − COMET| and exits 1 when one exceeds ``--tolerance``.

The side venv (numpy < 2, transformers < 5, pytorch-lightning, all resolved by pip)::

    python3.11 -m venv /tmp/comet-venv
    /tmp/comet-venv/bin/pip install torch==2.13.0 unbabel-comet==2.2.7
    .venv/bin/python bench/comet_parity.py --comet-python /tmp/comet-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PAIRS = [
    ("The committee postponed its decision until the spring.", "Der Ausschuss vertagte."),
    ("The cat sat on the mat.", "Die Katze sass auf der Matte."),
    ("Hello world, this is a test of the tiny model.", "Hallo Welt"),
    ("A quick brown fox jumps over the lazy dog.", "El gato se sentó en la alfombra."),
    ("Rare words like sesquipedalian and defenestration.", "Rare words like sesquipedalian."),
    ("Výbor odložil své rozhodnutí na jaro.", "Le comité a reporté sa décision au printemps."),
    # Longer than the tiny encoder's 128 positions: COMET's truncation, per segment and joint.
    (" ".join(["The committee postponed its decision until the spring."] * 20), "Hallo Welt"),
    (" ".join(["Die Katze sass auf der Matte."] * 10), " ".join(["The cat sat on the mat."] * 10)),
]  # fmt: skip

# name -> (class, hparams overrides): every hyper-parameter that changes the maths.
VARIANTS = {
    "kiwi-sparsemax-layernorm": ("unified_metric", {}),
    "kiwi-softmax-no-layernorm": (
        "unified_metric",
        {"layer_transformation": "softmax", "layer_norm": False, "final_activation": "Sigmoid"},
    ),
    "kiwi-sparsemax_patch-3-segments": (
        "unified_metric",
        {"layer_transformation": "sparsemax_patch", "input_segments": ["mt", "src", "ref"]},
    ),
    "kiwi-layer-1-no-dropout": ("unified_metric", {"sent_layer": 1, "dropout": 0.0}),
    "kiwi-xlm-roberta-xl": ("unified_metric", {"encoder_model": "XLM-RoBERTa-XL"}),
    "qe-avg-softmax": ("referenceless_regression_metric", {}),
    "qe-max-sparsemax": (
        "referenceless_regression_metric",
        {"pool": "max", "layer_transformation": "sparsemax", "layer_norm": False},
    ),
    "qe-cls-layer-2": ("referenceless_regression_metric", {"pool": "cls", "layer": 2}),
    "qe-xlm-roberta-xl": ("referenceless_regression_metric", {"encoder_model": "XLM-RoBERTa-XL"}),
    "qe-default-pool-3-hidden": (
        "referenceless_regression_metric",
        {"pool": "default", "hidden_sizes": [10, 8, 6], "activations": "Sigmoid"},
    ),
}

REAL_COMET = r"""
import json, sys, logging, warnings
logging.disable(logging.WARNING)
warnings.filterwarnings("ignore")
from comet import load_from_checkpoint
jobs = json.load(sys.stdin)
out = {}
for name, job in jobs.items():
    model = load_from_checkpoint(job["checkpoint"], strict=True, local_files_only=True)
    samples = [{"src": s, "mt": t} for s, t in job["pairs"]]
    out[name] = model.predict(samples, batch_size=4, gpus=0, progress_bar=False).scores
print(json.dumps(out))
"""


def build(base: Path) -> dict[str, Path]:
    from tests.engines.tiny_comet import build_comet

    directories = {}
    for name, (model_class, overrides) in VARIANTS.items():
        directory = base / name
        # Real COMET reads pretrained_model as a path; our reader finds <path>/encoder itself.
        directories[name] = build_comet(
            directory, model_class, pretrained_model=str(directory / "encoder"), hparams=overrides
        )
    return directories


def ours(directory: Path) -> list[float]:
    from engines.local_models import comet_model

    model, _tokenizer, _parameters, _family = comet_model.build(
        str(directory), {"path": str(directory)}, "cpu", "float32"
    )
    scores: list[float] = []
    for start in range(0, len(PAIRS), 4):  # COMET's batch size above
        batch = PAIRS[start : start + 4]
        scores += model.score([s for s, _ in batch], [t for _, t in batch])
    return scores


def real_comet(python: str, directories: dict[str, Path]) -> dict[str, list[float]]:
    jobs = {
        name: {"checkpoint": str(d / "checkpoints" / "model.ckpt"), "pairs": PAIRS}
        for name, d in directories.items()
    }
    done = subprocess.run(
        [python, "-c", REAL_COMET],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )
    if done.returncode != 0:
        raise SystemExit(f"real COMET failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--comet-python", default="/tmp/comet-venv/bin/python")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="comet-parity-") as base:
        directories = build(Path(base))
        theirs = real_comet(args.comet_python, directories)
        worst = 0.0
        for name, directory in directories.items():
            mine = ours(directory)
            diff = max(abs(a - b) for a, b in zip(mine, theirs[name], strict=True))
            worst = max(worst, diff)
            print(
                f"{name:34s} max |ours - COMET| = {diff:.2e}   scores {[round(s, 4) for s in mine]}"
            )
    count = f"{len(VARIANTS)} checkpoints × {len(PAIRS)} pairs"
    print(f"overall max |ours - COMET| = {worst:.2e} over {count}")
    sys.exit(0 if worst < args.tolerance else 1)


if __name__ == "__main__":
    main()
