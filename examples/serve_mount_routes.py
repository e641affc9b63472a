"""Mount ferrule's routes in your own aiohttp application, next to your own routes.

`add_routes(app, kernel, prefix="/ai")` serves the kernel API under /ai/ferrule/v1 and the
OpenAI-compatible API under /ai/v1; your app keeps its own routes, middlewares and
lifecycle, and owns the kernel. (Or mount a complete ferrule app as a sub-application:
`app.add_subapp("/ai", ferrule.server.create_app(kernel))`.) Runs a short demo and exits.
"""

from __future__ import annotations

import asyncio

from aiohttp import ClientSession, web
from ferrule import AsyncRuntime
from ferrule.server import add_routes
from ferrule_kernel import Kernel


async def hello(request: web.Request) -> web.Response:
    return web.json_response({"hello": "from the host app"})


async def main() -> None:
    kernel = Kernel()  # every installed plugin (plus any of your own: Kernel(plugins=[...]))
    app = web.Application()
    app.router.add_get("/hello", hello)
    add_routes(app, kernel, prefix="/ai", token="host-app-token")

    async def close_kernel(app: web.Application) -> None:
        await kernel.aclose()  # the host owns the kernel: it closes its components

    app.on_cleanup.append(close_kernel)
    # handler_cancellation: a client that disconnects stops its generation at once
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    base = f"http://{host}:{port}"
    print(f"host app at {base}")
    try:
        async with ClientSession() as session:
            async with session.get(f"{base}/hello") as response:
                print("host route:", await response.json())
            headers = {"Authorization": "Bearer host-app-token"}
            body = {"model": "test", "messages": [{"role": "user", "content": "mounted routes"}]}
            async with session.post(
                f"{base}/ai/v1/chat/completions", json=body, headers=headers
            ) as r:
                print("chat:", (await r.json())["choices"][0]["message"]["content"])
        async with AsyncRuntime(url=f"{base}/ai", token="host-app-token") as rt:
            print("kernel api:", await rt.call("echo", {"text": "through the host app"}))
    finally:
        await runner.cleanup()


asyncio.run(main())
