"""``ferrule keys set PROVIDER``, ``ferrule keys list``, ``ferrule keys path``: API keys kept
in the user's ``keys.json`` (`ferrule_kit.network.keys`), which providers read after their
environment variable. A key is read from the terminal without echo (or from stdin when
piped), never from the command line (arguments show in ``ps``), and is never printed.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..catalog import PROVIDERS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    keys = subparsers.add_parser(
        "keys", help="store API keys for providers (read after their environment variables)"
    )
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    store = actions.add_parser(
        "set",
        help="store a provider's key, typed without echo (or piped: echo $KEY | ferrule keys "
        "set openai)",
    )
    store.add_argument("provider", help="openai, gemini, anthropic, xai, or a plugin's provider")
    store.set_defaults(func=_set)
    listing = actions.add_parser("list", help="which providers have a stored key (masked)")
    listing.set_defaults(func=_list)
    path = actions.add_parser("path", help="print the keys file's path")
    path.set_defaults(func=_path)


def _canonical(provider: str) -> str:
    """The name a provider's plugin looks its key up under (``claude`` -> ``anthropic``)."""
    known = PROVIDERS.get(provider.lower())
    return known[1] if known else provider.lower()


def _mask(key: str) -> str:
    # Long keys show their last four characters, as providers' own consoles do; short
    # ones nothing, since four characters would be much of them.
    return f"…{key[-4:]}" if len(key) >= 20 else "****"


def _fail(message: str) -> int:
    print(f"ferrule keys: {message}", file=sys.stderr)
    return 1


def _set(args: argparse.Namespace) -> int:
    from ferrule_kit.network.keys import store_key

    provider = _canonical(args.provider)
    if sys.stdin.isatty():
        import getpass

        key = getpass.getpass(f"{provider} key (not shown): ")
    else:
        key = sys.stdin.readline()
    key = key.strip()
    if not key:
        return _fail("no key given; nothing stored")
    try:
        path = store_key(provider, key)
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    print(f"stored the {provider} key in {path}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from ferrule_kit.network.keys import keys_path, stored_keys

    try:
        keys = stored_keys()
    except ValueError as exc:
        return _fail(str(exc))
    if not keys:
        print(f"no stored keys ({keys_path()}); store one with: ferrule keys set PROVIDER")
        return 0
    for provider, key in sorted(keys.items()):
        variables = next((v for _, name, v in PROVIDERS.values() if name == provider), ())
        shadowed = [v for v in variables if os.environ.get(v)]
        note = f"  (unused while {shadowed[0]} is set)" if shadowed else ""
        print(f"{provider:<12} {_mask(key)}{note}")
    return 0


def _path(args: argparse.Namespace) -> int:
    from ferrule_kit.network.keys import keys_path

    print(keys_path())
    return 0
