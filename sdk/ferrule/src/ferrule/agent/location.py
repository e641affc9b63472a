"""Agno's ``add_location_to_context``: the agent's approximate location (city, region,
country) from a public IP geolocation service that answers for the caller's own address
(ip-api.com's JSON by default; the host may name another in ``FERRULE_LOCATION_URL``),
asked through the runtime's ``http_request`` operator (ferrule-http-request), so the
host's address policy and timeout apply. A failed lookup leaves the line out, as Agno's
does."""

from __future__ import annotations

import json
import os
from typing import Any

from ferrule_kernel import FerruleError, get_logger

log = get_logger("ferrule.agent")

#: The geolocation service asked when the host names none (it answers for the address
#: the request comes from: no address of ours is sent).
DEFAULT_LOCATION_URL = "http://ip-api.com/json/"
LOCATION_URL_VARIABLE = "FERRULE_LOCATION_URL"


async def approximate_location(runtime: Any) -> str | None:
    """ "City, Region, Country" of this machine's public address, or None."""
    url = os.environ.get(LOCATION_URL_VARIABLE) or DEFAULT_LOCATION_URL
    try:
        reply = await runtime.acall("http_request", {"url": url, "method": "GET", "timeout": 5})
        found = json.loads(reply["body"]) if reply["status_code"] == 200 else {}
    except (FerruleError, ValueError, KeyError) as exc:
        log.warning("location_not_found", error=repr(exc))
        return None
    if not isinstance(found, dict):
        return None
    parts = [found.get(key) for key in ("city", "region", "country")]
    return ", ".join(p for p in parts if isinstance(p, str) and p) or None
