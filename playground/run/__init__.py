"""A whole run, call by call: replay under a policy with the prompt cache and prices (one cost
model), and compare of several policies side by side."""

from .compare import Row, compare, rows_to_json
from .prices import Price, PriceTable, read_prices
from .promptcache import CACHE_MODELS
from .replay import Call, Replay, replay, replay_to_json

__all__ = ["CACHE_MODELS", "Call", "Price", "PriceTable", "Replay", "Row", "compare", "read_prices", "replay",
           "replay_to_json", "rows_to_json"]
