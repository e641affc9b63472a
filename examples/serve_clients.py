"""Start `ferrule serve` and use it two ways: as a ferrule Runtime, and through the
official `openai` client (pip install openai), on the deterministic test model
(pip install ferrule-testmodel). Runs by itself and stops the server at the end.

In real use you start the server once, e.g. `FERRULE_TOKEN=... ferrule serve --host 0.0.0.0`,
and point clients at it; here the script starts it on a free loopback port.
"""

from __future__ import annotations

import subprocess
import sys

from ferrule import Runtime

server = subprocess.Popen(
    [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0"],
    stdout=subprocess.PIPE,
    text=True,
)
try:
    line = server.stdout.readline()  # "ferrule serve: listening on http://127.0.0.1:PORT ..."
    url = line.split("listening on ")[1].split()[0]
    print(f"server at {url}")

    # 1. The kernel over the network: the same Runtime API as in-process.
    with Runtime(url=url) as rt:
        print("echo:", rt.call("echo", {"text": "Hello world"}))
        rt.define("test_language_model", "lm0", {})
        request = {"messages": [{"role": "user", "content": "streamed over the network"}]}
        for item in rt.call_iter_method("lm0", "infer", request):
            print("delta:", repr(item["message"]["content"][0]["text"]), item["finish_reason"])
        rt.delete("lm0")

    # 2. The OpenAI-compatible endpoint, through the official client.
    import openai

    client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused-on-loopback")
    print("models:", [m.id for m in client.models.list()])
    reply = client.chat.completions.create(
        model="test", messages=[{"role": "user", "content": "Hi from the openai client"}]
    )
    print("reply:", reply.choices[0].message.content, "| usage:", reply.usage.total_tokens)
    stream = client.chat.completions.create(
        model="test", messages=[{"role": "user", "content": "one two three"}], stream=True
    )
    print("stream:", [c.choices[0].delta.content for c in stream if c.choices])
finally:
    server.terminate()  # SIGTERM: the server closes its components and exits
    server.wait(timeout=20)
print("server stopped")
