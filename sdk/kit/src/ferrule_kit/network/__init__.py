"""The network and the host's limits on it: HTTP out, and what a request may reach.

- `ferrule_kit.network.http` and `ferrule_kit.network.sse`: the HTTP client providers
  share (typed errors, retries) and the one server-sent-events reader;
- `ferrule_kit.network.keys`: the API keys the user stored (``ferrule keys set``);
- `ferrule_kit.network.addresses` and `ferrule_kit.network.checked_connector`: where
  outgoing HTTP may connect, and the aiohttp connector that holds every connection to it;
- `ferrule_kit.network.hostpolicy` and `ferrule_kit.network.paths`: host policy wins over
  a model's or a network client's arguments, and the server paths such a client may name.
"""
