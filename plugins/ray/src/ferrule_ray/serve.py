"""``ferrule serve`` on Ray Serve: a deployment whose replicas each run the ferrule server
(the kernel protocol and the OpenAI-compatible routes) on loopback in their own process,
and forward every HTTP request Ray Serve routes to them, streaming the reply as it comes.

Replicas and autoscaling are configured the Ray Serve way (``num_replicas``,
``autoscaling_config``, ``ray_actor_options`` in ``.options(...)`` or a Serve config
file); ``serve run ferrule_ray.serve:app token=...`` deploys it from the command line.
Each replica has its own kernel: requests that need no earlier ``define`` (``call``,
``/v1/chat/completions``, ``/v1/models``) may go to any replica; a component defined
through one replica lives in that replica, so ``define`` then ``call_method`` needs one
replica, or components placed on the cluster by a client that keeps its own kernel.
"""

from __future__ import annotations

from typing import Any

from ray import serve
from starlette.requests import Request
from starlette.responses import StreamingResponse

#: Headers that belong to one connection, not to the request or reply it carries.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)


class FerruleServer:
    """One replica: a ferrule server on a free loopback port of this process.
    ``options`` are ``ferrule.server.app.serve``'s (``token``, ``models``,
    ``allowed_hosts``, ``allowed_origins``, ``max_body_size``, ...). Give a ``token``
    whenever Ray Serve's proxy listens beyond loopback: the inner server sees every
    request as coming from its own host."""

    def __init__(self, **options: Any) -> None:
        from ferrule.server.app import ServerThread

        self._server = ServerThread(host="127.0.0.1", port=0, **options)
        self._url = self._server.start().rstrip("/")
        self._session: Any = None

    async def __call__(self, request: Request) -> StreamingResponse:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(
                auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None)
            )
        path = request.url.path
        root = request.scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        target = f"{self._url}{path}" + (f"?{request.url.query}" if request.url.query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream = await self._session.request(
            request.method, target, headers=headers, data=await request.body()
        )

        async def relay() -> Any:
            try:
                async for chunk in upstream.content.iter_any():
                    yield chunk
            finally:
                upstream.release()

        reply_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP}
        return StreamingResponse(relay(), status_code=upstream.status, headers=reply_headers)

    def __del__(self) -> None:
        self._server.stop()


#: The deployment: ``deployment.options(num_replicas=4).bind(token=...)``. A replica is
#: an asyncio server that streams many requests at once, so it takes far more than Ray
#: Serve's default of 5 at a time (which queues the rest in the proxy).
deployment = serve.deployment(name="ferrule", max_ongoing_requests=1000)(FerruleServer)


def app(args: dict[str, str]) -> Any:
    """For ``serve run ferrule_ray.serve:app [token=...] [models=a,b]``."""
    options: dict[str, Any] = dict(args)
    if "models" in options:
        options["models"] = [m for m in options["models"].split(",") if m]
    return deployment.bind(**options)
