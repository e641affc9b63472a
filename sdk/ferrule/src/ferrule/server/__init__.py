"""`ferrule serve`: one kernel over HTTP, and an OpenAI-compatible chat endpoint.

Routes (docs/serve.md has the protocol in full):

- ``/ferrule/v1/{define,delete,call,call_method,iter}`` (``POST``) and
  ``/ferrule/v1/{plugins,operators,component_types}`` (``GET``): the kernel's requests,
  what `ferrule.remote` (``Runtime(url=...)``) speaks. Errors are
  ``{"error": FerruleError.to_dict()}``; ``iter`` streams NDJSON.
- ``/v1/chat/completions``, ``/v1/responses`` and ``/v1/models``: OpenAI's Chat
  Completions and Responses wire formats, served by any installed language-model backend
  (``model`` is routed by `ferrule.models.route_model`, an API model first, then a local
  one; one component per model id, defined on first use); ``/v1/embeddings``, served by
  any installed embedder (`ferrule.models.route_embedder`). Errors are OpenAI-shaped.
- ``/health``: ``{"status": "ok"}`` without a token, for load balancers.

Embed it with `add_routes` (your aiohttp app, your kernel) or `create_app`; run it with
`serve` (what the CLI does) or `ServerThread`. Only this package and the CLI import
aiohttp's server side; ``import ferrule`` never does.

The package: `gate` (what every route shares, the one place for request checks: Host,
Origin and CORS, the token, reading a JSON body within a size, a depth and a time,
strict JSON out, redacting secrets), `kernel_api` (the kernel's requests), `openai_api`
(the OpenAI-compatible routes and `ModelCatalog`), `openai_wire` (the OpenAI request,
reply and error translation, no HTTP), `responses_api`, `responses_wire` and
`responses_builder` (the same for the Responses API), `anthropic_api`, `anthropic_wire`
and `anthropic_builder` (Anthropic's Messages API, ``/v1/messages``), `embeddings_api`
(``/v1/embeddings``), `app` (`add_routes`, `create_app`, `serve`, `ServerThread`).
"""

from .app import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    DEFAULT_SHUTDOWN_GRACE,
    KERNEL_KEY,
    MIN_TOKEN_LENGTH,
    ServerThread,
    add_routes,
    check_bind,
    create_app,
    is_loopback,
    run_serving,
    serve,
)
from .gate import (
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_READ_TIMEOUT,
    MAX_JSON_DEPTH,
    SECRET_ATTRIBUTE_WORDS,
)
from .openai_api import WELL_KNOWN_MODELS, ModelCatalog
from .openai_wire import (
    ChatRequest,
    OpenAIError,
    chat_request_from_openai,
    completion_message,
    delta_from_item,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_PORT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_SHUTDOWN_GRACE",
    "KERNEL_KEY",
    "MAX_JSON_DEPTH",
    "MIN_TOKEN_LENGTH",
    "SECRET_ATTRIBUTE_WORDS",
    "WELL_KNOWN_MODELS",
    "ChatRequest",
    "ModelCatalog",
    "OpenAIError",
    "ServerThread",
    "add_routes",
    "chat_request_from_openai",
    "check_bind",
    "completion_message",
    "create_app",
    "delta_from_item",
    "is_loopback",
    "run_serving",
    "serve",
]
