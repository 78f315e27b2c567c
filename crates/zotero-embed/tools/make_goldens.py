#!/usr/bin/env python3
"""Golden embeddings of the tiny test models, made by the reference implementation.

    python3 crates/zotero-embed/tools/make_goldens.py [fixtures/models]

For each of tiny-bert (mean pooling) and tiny-bert-cls (CLS pooling) this loads the model dir
with sentence-transformers' own `SentenceTransformer(dir)`, which honours the model's
modules.json (Transformer -> Pooling -> Normalize), sentence_bert_config.json's max_seq_length
and its tokenizer, and writes `<dir>/goldens.json`:

  {"implementation": {...versions...}, "max_seq_length": N,
   "cases": [{"text": ..., "input_ids": [...], "embedding": [...]}, ...]}

`input_ids` are what the model's tokenizer gives (with truncation to max_seq_length, as
sentence-transformers does), `embedding` is `encode(texts, normalize_embeddings=False)`: the
normalization, if any, is the model's own 2_Normalize module. float32 values are written as
the shortest decimal that reads back to the same double (Python repr), i.e. exactly.

Run once after make_tiny_model.py; CI never runs Python, the goldens are committed.
Needs: torch (CPU is enough), sentence-transformers, transformers.
"""

import json
import os
import platform
import sys

import numpy as np
import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer

TEXTS = [
    "Search by meaning over a Zotero library.",
    "deep neural networks, language models & sentence embeddings!",
    "Café naïve résumé: accents are stripped by the uncased normalizer.",
    "Unknown words: xylophonic quixotry zzzyzx.",
    "中文 文本 搜索 (CJK characters, some unknown)",
    "",
    "   ",
    "a",
    "The first paper of the library cites two books; the second cites none.",
    # Longer than any max_seq_length of the tiny models: checks truncation (keeps [SEP]).
    " ".join(["the theory of learning in neural networks is a study of deep models"] * 8),
    "Tabs\tand\nnewlines\r\nare whitespace; control\u0007chars are dropped.",
    "numbers 12345 and 3.14159, e-mail someone@example.org, URL https://zotero.org/x?y=1",
]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "fixtures", "models"
    )
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for name in ("tiny-bert", "tiny-bert-cls"):
        path = os.path.join(root, name)
        model = SentenceTransformer(path, device="cpu")
        model.eval()
        embeddings = model.encode(
            TEXTS, batch_size=4, normalize_embeddings=False, convert_to_numpy=True
        )
        assert embeddings.dtype == np.float32
        cases = []
        for text, emb in zip(TEXTS, embeddings):
            features = model.tokenize([text])
            ids = features["input_ids"][0].tolist()
            cases.append({"text": text, "input_ids": ids, "embedding": [float(x) for x in emb]})
        out = {
            "implementation": {
                "made_by": "sentence-transformers SentenceTransformer(dir).encode(texts, normalize_embeddings=False)",
                "sentence_transformers": sentence_transformers.__version__,
                "transformers": transformers.__version__,
                "tokenizers": tokenizers.__version__,
                "torch": torch.__version__,
                "numpy": np.__version__,
                "python": platform.python_version(),
                "device": "cpu",
            },
            "modules": [type(m).__name__ for m in model],
            "max_seq_length": model.max_seq_length,
            "cases": cases,
        }
        with open(os.path.join(path, "goldens.json"), "w", encoding="utf-8", newline="\n") as f:
            # One case a line: readable diffs, and no 30 lines a vector.
            head = {k: v for k, v in out.items() if k != "cases"}
            f.write(json.dumps(head, ensure_ascii=False, sort_keys=True)[:-1])
            f.write(', "cases": [\n')
            f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
            f.write("\n]}\n")
        print(name, out["modules"], out["max_seq_length"], embeddings.shape)


if __name__ == "__main__":
    main()
