#!/usr/bin/env python3
"""Check Wikid's HTTP with REDbot (https://redbot.org), run against a local server.

Usage: check.py BASE_URL [--cookie 'wikid_session=…'] [--json OUT]

For each resource (an article, an asset, RecentChanges, the REST page and
html endpoints), anonymously and, with --cookie, logged in, REDbot fetches
it and runs its sub-checks (content negotiation, If-None-Match,
If-Modified-Since, ranges, HEAD). Every finding is printed with its level;
the exit status is 1 when any finding is BAD.
"""

import argparse
import json
import sys
from configparser import ConfigParser

import thor
from httplint.note import levels
from redbot.resource import HttpResource

PATHS = [
    "/wiki/Main_Page",
    "/wiki/Help:Syntax",
    "/wiki/Special:RecentChanges",
    "/w/rest.php/v1/page/Main_Page",
    "/w/rest.php/v1/page/Main_Page/html",
]


def run(url, headers):
    parser = ConfigParser()
    parser.read_dict({"redbot": {"enable_local_access": "True"}})
    resource = HttpResource(parser["redbot"], descend=False)
    resource.set_request(url, headers=headers)

    @thor.events.on(resource)
    def check_done():
        thor.stop()

    resource.check()
    thor.run()
    if not resource.has_response:
        raise SystemExit(f"{url}: REDbot got no response ({resource.fetch_error})")
    found = []

    def walk(note, depth):
        found.append({"level": note.level.name, "category": note.category.value,
                      "summary": note.summary, "depth": depth})
        for sub in note.subnotes:
            walk(sub, depth + 1)

    for note in resource.response.notes:
        walk(note, 0)
    return resource.response.status_code, found


def asset_path(base, headers):
    """The content-hashed stylesheet URL the article links."""
    import re
    import urllib.request

    req = urllib.request.Request(base + "/wiki/Main_Page", headers=dict(headers))
    body = urllib.request.urlopen(req, timeout=10).read().decode()
    m = re.search(r'href="(/static/style\.[0-9a-f]+\.css)"', body)
    if not m:
        raise SystemExit("no stylesheet link in the main page")
    return m.group(1)


def run_isolated(url, headers):
    """run in a child process: thor's loop is not meant to be started twice."""
    import subprocess

    cmd = [sys.executable, __file__, "--one", url]
    for n, v in headers:
        cmd += ["--header", f"{n}: {v}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120).stdout
    got = json.loads(out)
    return got["status"], got["notes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base", nargs="?")
    ap.add_argument("--cookie", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--one", default="")
    ap.add_argument("--header", action="append", default=[])
    args = ap.parse_args()
    if args.one:
        headers = [tuple(h.split(": ", 1)) for h in args.header]
        status, notes = run(args.one, headers)
        json.dump({"status": status, "notes": notes}, sys.stdout)
        return 0
    base = args.base.rstrip("/")

    who = [("anonymous", [])]
    if args.cookie:
        who.append(("logged-in", [("Cookie", args.cookie)]))
    report, bad = [], 0
    for name, headers in who:
        for path in PATHS + [asset_path(base, headers)]:
            status, notes = run_isolated(base + path, headers)
            report.append({"who": name, "path": path, "status": status, "notes": notes})
            print(f"== {name} {path} ({status})")
            for n in notes:
                print(f"  {'  ' * n['depth']}{n['level']:5} [{n['category']}] {n['summary']}")
                if n["level"] == levels.BAD.name:
                    bad += 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print(f"REDbot: {bad} BAD finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
