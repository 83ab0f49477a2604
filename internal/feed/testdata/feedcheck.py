"""Parses feed documents with feedparser, as a feed reader would, and
prints what it found as JSON: one object per file, in order.

Usage: python3 feedcheck.py FILE... (the Go tests in internal/web run it;
exit status 3 when feedparser is not installed, so they can skip).
"""
import json
import sys

try:
    import feedparser
except ImportError:
    sys.exit(3)

out = []
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        d = feedparser.parse(f.read())
    entries = []
    for e in d.entries:
        content = e.get("content") or []
        entries.append({
            "title": e.get("title"),
            "link": e.get("link"),
            "id": e.get("id"),
            "updated": e.get("updated") or e.get("published"),
            "updated_parsed": bool(e.get("updated_parsed") or e.get("published_parsed")),
            "author": e.get("author"),
            "summary": e.get("summary"),
            "content": content[0].get("value") if content else e.get("description"),
        })
    out.append({
        "file": path,
        "version": d.get("version"),
        "bozo": int(d.bozo),
        "bozo_exception": repr(d.get("bozo_exception")) if d.bozo else "",
        "title": d.feed.get("title"),
        "link": d.feed.get("link"),
        "entries": entries,
        "feedparser": feedparser.__version__,
    })
json.dump(out, sys.stdout)
