"""Use the kernel in-process inside your own aiohttp server: your handler calls a
language model through an `AsyncRuntime`, on the server's own event loop, with no second
hop over HTTP. Its kernel (`rt.kernel`) can serve ferrule's routes too (see
serve_mount_routes.py). Runs a short demo and exits.
"""

from __future__ import annotations

import asyncio

from aiohttp import ClientSession, web
from ferrule import AsyncRuntime

RUNTIME = web.AppKey("runtime", AsyncRuntime)


async def on_startup(app: web.Application) -> None:
    rt = AsyncRuntime()  # a kernel with every installed plugin, on this server's loop
    await rt.define("test_language_model", "lm", {})  # e.g. a local Qwen3 in production
    app[RUNTIME] = rt


async def on_cleanup(app: web.Application) -> None:
    await app[RUNTIME].stop()  # deletes (closes) the components


async def shout(request: web.Request) -> web.StreamResponse:
    """Your own endpoint: streams the model's reply, upper-cased, as plain text."""
    text = (await request.json())["text"]
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    await response.prepare(request)
    request_ = {"messages": [{"role": "user", "content": text}]}
    async for item in request.app[RUNTIME].call_iter_method("lm", "infer", request_):
        await response.write(item["message"]["content"][0]["text"].upper().encode())
    await response.write_eof()
    return response


async def main() -> None:
    app = web.Application()
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    app.router.add_post("/shout", shout)
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        async with ClientSession() as session:
            async with session.post(
                f"http://{host}:{port}/shout", json={"text": "in process"}
            ) as r:
                print("shout:", await r.text())
    finally:
        await runner.cleanup()


asyncio.run(main())
