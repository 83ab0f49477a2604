#!/usr/bin/env python3
"""Regenerate e2e/xss-data/vectors.json from the PyPI package brs-kb.

    python3 e2e/xss-data/extract.py            # pip-downloads the pinned wheel into a temp dir
    python3 e2e/xss-data/extract.py --wheel brs_kb-4.0.2-py3-none-any.whl

The wheel is only unpacked and imported from a temp dir (brs-kb has no
dependencies); nothing is installed. The selection is deterministic: the
same wheel always gives the same vectors.json. See README.md for the rule.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "brs-kb"
VERSION = "4.0.2"
WHEEL = "brs_kb-4.0.2-py3-none-any.whl"
WHEEL_SHA256 = "a9f3737e9ef00f0a3b791d9d3b849618ec3e3eb98c27436ba174ff626ba5ebd8"  # PyPI's hash of the wheel

MAX_BYTES = 1000  # longer payloads are repetitive fuzz filler

# (bucket, quota, predicate on (contexts, tags)); a vector goes into the
# first bucket whose predicate it matches, buckets are filled in order.
BUCKETS = [
    ("markdown", 130, lambda c, t: "markdown" in c or "markdown" in t),
    ("svg-mathml", 25, lambda c, t: c & {"svg", "svg_xss", "mathml", "xml"} or t & {"svg", "mathml"}),
    ("url", 50, lambda c, t: c & {"href", "url", "src", "url_injection"}),
    ("attribute", 50, lambda c, t: "html_attribute" in c or t & {"html-attribute", "event-handler"}),
    ("css", 20, lambda c, t: c & {"css", "css_injection"}),
    ("parser-mutation", 20, lambda c, t: c & {"html_comment", "dom_clobbering"} or t & {"mxss", "mutation", "comment"}),
    ("polyglot", 20, lambda c, t: "polyglot" in t),
    ("javascript", 15, lambda c, t: c & {"javascript", "js_string"}),
    ("html", 70, lambda c, t: "html_content" in c),
]


def fetch_wheel(dest):
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "-d", dest, f"{PACKAGE}=={VERSION}"],
        check=True, stdout=sys.stderr)
    return os.path.join(dest, WHEEL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", help="use this wheel instead of pip-downloading it")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="brs-kb-") as tmp:
        wheel = args.wheel or fetch_wheel(tmp)
        digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
        if digest != WHEEL_SHA256:
            sys.exit(f"{wheel}: sha256 {digest}, want {WHEEL_SHA256} ({PACKAGE} {VERSION})")
        unpacked = os.path.join(tmp, "unpacked")
        with zipfile.ZipFile(wheel) as z:
            z.extractall(unpacked)
        sys.path.insert(0, unpacked)
        from brs_kb.payloads import FULL_PAYLOAD_DATABASE as db  # noqa: E402
        from brs_kb.version import PAYLOAD_DB_VERSION  # noqa: E402

        # Unique payload texts, each under its smallest id.
        first = {}
        for pid in sorted(db):
            e = db[pid]
            p = e.payload
            if not isinstance(p, str) or not p.strip() or "\x00" in p or len(p.encode()) > MAX_BYTES:
                continue
            first.setdefault(p, (pid, e))
        pool = sorted(first.values(), key=lambda x: hashlib.sha256(x[1].payload.encode()).hexdigest())

        taken = set()
        vectors = []
        counts = {}
        for name, quota, pred in BUCKETS:
            n = 0
            for pid, e in pool:
                if n == quota:
                    break
                if pid in taken:
                    continue
                c, t = set(e.contexts or []), set(e.tags or [])
                if not pred(c, t):
                    continue
                taken.add(pid)
                n += 1
                vectors.append({"id": pid, "bucket": name, "payload": e.payload,
                                "contexts": list(e.contexts or []), "tags": list(e.tags or [])})
            counts[name] = n

        out = {
            "source": {
                "package": PACKAGE, "registry": "PyPI", "version": VERSION,
                "payload_db_version": PAYLOAD_DB_VERSION, "wheel": WHEEL, "wheel_sha256": digest,
                "license": "MIT (Copyright (c) 2025 EasyProTech LLC / Brabus); see LICENSE-brs-kb",
                "data": "brs_kb/payloads/** merged as brs_kb.payloads.FULL_PAYLOAD_DATABASE",
                "database_entries": len(db), "unique_payloads_under_limit": len(pool),
            },
            "selection": {
                "rule": "unique payload texts (smallest id wins), <= %d UTF-8 bytes, no NUL; ordered by "
                        "sha256(payload); buckets filled in order, each taking the first vectors "
                        "matching it that no earlier bucket took" % MAX_BYTES,
                "buckets": counts,
            },
            "vectors": vectors,
        }
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(out, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print(f"{len(vectors)} vectors from {PACKAGE} {VERSION} -> {args.out}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
