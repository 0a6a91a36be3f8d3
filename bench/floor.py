"""The floor: fetch exactly the request targets a command made, JSON-parse each answer, keep nothing.

It moves the same bytes over the same HTTP and parses every one of them once, whole;
the runner divides every measured time by this one. (The tool parses pod pages only in
part, snapshot/wire.py, so a command that mostly reads can come in under it.) It uses the
fastest whole-document parser the tool may use (orjson when installed), one keep-alive connection,
no client library, and no cyclic garbage collector: a script that keeps nothing makes no
reference cycles, and with the collector on it walks each page's freshly parsed objects
again and again (time the tool, loading with the collector paused, does not pay: a floor
it could beat would be no floor).

    python -m bench.floor http://127.0.0.1:PORT TARGETS.json
"""

from __future__ import annotations

import gc
import http.client
import json
import sys
from urllib.parse import urlsplit

try:
    from orjson import loads
except ImportError:
    from json import loads


def replay(base_url: str, targets: list[str]) -> int:
    """GET each target in order; returns how many objects were parsed (list items or 1)."""
    url = urlsplit(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    parsed = 0
    for target in targets:
        conn.request("GET", target, headers={"Accept": "application/json"})
        resp = conn.getresponse()
        doc = loads(resp.read())
        parsed += len(doc.get("items") or ()) if isinstance(doc, dict) and "items" in doc else 1
        del doc
    conn.close()
    return parsed


def main() -> None:
    gc.disable()
    with open(sys.argv[2]) as f:
        targets = json.load(f)
    print(replay(sys.argv[1], targets))


if __name__ == "__main__":
    main()
