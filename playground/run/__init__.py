"""A whole run, call by call: replay under a policy with the prompt cache and prices (one cost
model), and compare of several policies side by side."""

from .billed import BILLED, LogFit, bill_rows, log_fit
from .compare import Row, compare, rows_to_json
from .hidden import HiddenUse, calls_with, lost_calls
from .inferred import infer
from .prices import (
    CATALOGUE,
    DEFAULT_MODEL,
    PRICE_FIELDS,
    UNKNOWN_NOTE,
    Price,
    PriceTable,
    known,
    model_for,
    money,
    read_prices,
    rounded,
)
from .promptcache import CACHE_MODELS, RequestCost, cache_models
from .replay import (
    AS_RAN,
    FULL,
    MODES,
    Call,
    Progress,
    Replay,
    call_starts,
    chart_rows,
    compaction_marks,
    replay,
    replay_to_json,
    sweep,
    sweep_points,
)
from .roundtrip import RoundTrip, recall_to_json, round_trips

__all__ = ["AS_RAN", "BILLED", "CACHE_MODELS", "CATALOGUE", "DEFAULT_MODEL", "FULL", "MODES", "PRICE_FIELDS",
           "UNKNOWN_NOTE", "Call", "HiddenUse", "LogFit", "Price", "PriceTable", "Progress", "Replay", "RequestCost",
           "RoundTrip", "Row", "bill_rows", "cache_models", "call_starts", "calls_with", "chart_rows",
           "compaction_marks", "compare", "infer", "known", "log_fit", "lost_calls", "model_for", "money",
           "read_prices", "recall_to_json", "replay", "replay_to_json", "round_trips", "rounded", "rows_to_json",
           "sweep", "sweep_points"]
