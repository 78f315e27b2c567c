#!/usr/bin/env python3
"""Write the tiny BERT test models of zotero-embed, deterministically, byte for byte.

    python3 crates/zotero-embed/tools/make_tiny_model.py [fixtures/models]

Writes two models (together with their goldens under 200 KB, hence the small vocabulary
and position tables) in sentence-transformers layout (config.json, model.safetensors,
tokenizer.json, tokenizer_config.json, special_tokens_map.json, vocab.txt, modules.json,
1_Pooling/config.json, 2_Normalize/, sentence_bert_config.json):

  (No BERT pooler weights: sentence-transformers never uses them, and they would only add size.)

  tiny-bert/      2 layers, hidden 32, 4 heads, intermediate 64, max_position 64,
                  max_seq_length 48 (so long texts are truncated), mean pooling + normalize
                  (the shape of all-MiniLM-L6-v2's pipeline)
  tiny-bert-cls/  1 layer, hidden 16, 2 heads, intermediate 32, max_position 64,
                  max_seq_length 32, CLS pooling + normalize (the pipeline of bge-small-en-v1.5)

Weights are random (numpy's legacy RandomState, fixed seeds) with a larger spread than BERT's
0.02 init, so that different texts give clearly different vectors and a wrong pooling, mask or
layer-norm shows in the goldens. The vocabulary is a few hundred WordPiece tokens: the five
specials, ASCII characters, ## suffixes, two CJK characters and as many words as fit in 200;
everything else becomes [UNK].

Needs: numpy, safetensors, tokenizers (no torch). Then run make_goldens.py.
"""

import json
import os
import sys

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

WORDS = """
the of and to in a is that for it as was with be by on not he this are or his from at which
but have an they you were her she there been one all we their has would when if so no what
up out more can about into than them only other new some could time these two may then do
first any my now such like our over man me even most made after also did many before must
through back years where much your way well down should because each just those people how too
little state good very make world still own see men work long get here between both life being
under never day same another know while last might us great old year off come since against
go came right used take three search meaning library paper papers model models vector vectors
index query text texts word words sentence sentences zotero note notes item items author
authors title journal article articles book books chapter cite citation data science learning
deep neural network networks language encoder embedding embeddings rust python cafe naive
resume physics biology chemistry history theory method methods result results study
""".split()

SUFFIXES = """
##s ##es ##ed ##ing ##er ##ers ##ly ##ion ##ions ##al ##ment ##ness ##ity ##ic ##ive ##able
##ize ##ized ##a ##e ##i ##o ##u ##n ##t ##r ##l ##d ##y ##m ##k ##g ##h ##p ##c ##b ##f ##w
##v ##x ##z ##q ##j
""".split()

# Two CJK characters the BERT normalizer isolates; the others in the goldens are unknown.
CJK = ["中", "文"]


def vocabulary():
    chars = [chr(c) for c in range(ord("!"), ord("~") + 1) if not chr(c).isupper()]
    seen = set()
    vocab = []
    for token in SPECIALS + chars + CJK + SUFFIXES + WORDS:
        if token not in seen:
            seen.add(token)
            vocab.append(token)
    # 200 tokens keep the committed fixtures small; the words past it are simply not in it.
    return vocab[:200]


def tokenizer(vocab, max_len):
    model = WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", max_input_chars_per_word=100)
    tok = Tokenizer(model)
    # Exactly BERT's uncased pipeline: clean text, isolate CJK, lowercase (which strips accents).
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    for special in SPECIALS:
        tok.add_special_tokens([special])
    del max_len  # truncation is the encoder's job (max_seq_length), as in sentence-transformers
    return tok


def weights(rng, vocab_size, hidden, layers, intermediate, max_pos):
    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def ln(prefix, out):
        out[prefix + ".weight"] = (1.0 + rng.standard_normal(hidden) * 0.1).astype(np.float32)
        out[prefix + ".bias"] = w(hidden, scale=0.05)

    t = {}
    t["embeddings.word_embeddings.weight"] = w(vocab_size, hidden, scale=1.0)
    t["embeddings.position_embeddings.weight"] = w(max_pos, hidden, scale=0.5)
    t["embeddings.token_type_embeddings.weight"] = w(2, hidden, scale=0.5)
    ln("embeddings.LayerNorm", t)
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            t[p + f"attention.self.{name}.weight"] = w(hidden, hidden)
            t[p + f"attention.self.{name}.bias"] = w(hidden, scale=0.05)
        t[p + "attention.output.dense.weight"] = w(hidden, hidden)
        t[p + "attention.output.dense.bias"] = w(hidden, scale=0.05)
        ln(p + "attention.output.LayerNorm", t)
        t[p + "intermediate.dense.weight"] = w(intermediate, hidden)
        t[p + "intermediate.dense.bias"] = w(intermediate, scale=0.05)
        t[p + "output.dense.weight"] = w(hidden, intermediate)
        t[p + "output.dense.bias"] = w(hidden, scale=0.05)
        ln(p + "output.LayerNorm", t)
    return t


def dump(path, value):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(value, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def write_model(out, *, seed, layers, hidden, heads, intermediate, max_pos, max_seq, pooling):
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    os.makedirs(os.path.join(out, "2_Normalize"), exist_ok=True)
    vocab = vocabulary()
    config = {
        "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": intermediate,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": max_pos,
        "model_type": "bert",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": 2,
        "use_cache": True,
        "vocab_size": len(vocab),
    }
    dump(os.path.join(out, "config.json"), config)
    rng = np.random.RandomState(seed)
    tensors = weights(rng, len(vocab), hidden, layers, intermediate, max_pos)
    save_file(dict(sorted(tensors.items())), os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(t + "\n" for t in vocab))
    tokenizer(vocab, max_seq).save(os.path.join(out, "tokenizer.json"))
    dump(
        os.path.join(out, "tokenizer_config.json"),
        {
            "clean_up_tokenization_spaces": True,
            "cls_token": "[CLS]",
            "do_basic_tokenize": True,
            "do_lower_case": True,
            "mask_token": "[MASK]",
            "model_max_length": max_pos,
            "never_split": None,
            "pad_token": "[PAD]",
            "sep_token": "[SEP]",
            "strip_accents": None,
            "tokenize_chinese_chars": True,
            "tokenizer_class": "BertTokenizer",
            "unk_token": "[UNK]",
        },
    )
    dump(
        os.path.join(out, "special_tokens_map.json"),
        {
            "cls_token": "[CLS]",
            "mask_token": "[MASK]",
            "pad_token": "[PAD]",
            "sep_token": "[SEP]",
            "unk_token": "[UNK]",
        },
    )
    dump(
        os.path.join(out, "modules.json"),
        [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
    )
    dump(os.path.join(out, "sentence_bert_config.json"), {"do_lower_case": False, "max_seq_length": max_seq})
    dump(
        os.path.join(out, "1_Pooling", "config.json"),
        {
            "include_prompt": True,
            "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_lasttoken": False,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
            "pooling_mode_mean_tokens": pooling == "mean",
            "pooling_mode_weightedmean_tokens": False,
            "word_embedding_dimension": hidden,
        },
    )
    # git keeps no empty directories, and sentence-transformers wants 2_Normalize to exist.
    with open(os.path.join(out, "2_Normalize", ".gitkeep"), "w") as f:
        f.write("")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "fixtures", "models"
    )
    write_model(
        os.path.join(root, "tiny-bert"),
        seed=20240516, layers=2, hidden=32, heads=4, intermediate=64, max_pos=64, max_seq=48, pooling="mean",
    )
    write_model(
        os.path.join(root, "tiny-bert-cls"),
        seed=20240517, layers=1, hidden=16, heads=2, intermediate=32, max_pos=64, max_seq=32, pooling="cls",
    )


if __name__ == "__main__":
    main()
