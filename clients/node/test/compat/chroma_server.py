"""A throwaway Chroma server for the Node compat tests (ferrule_chroma.testing's): prints its
URL as one JSON line, and stops when its stdin closes."""

import json
import sys

from ferrule_chroma.testing import ChromaServer

with ChromaServer() as server:
    print(json.dumps({"url": server.url}), flush=True)
    sys.stdin.read()
