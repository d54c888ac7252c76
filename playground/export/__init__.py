"""What is written out: the files behind the download buttons, the request in any API format
among them (``exports``), the policy as framework settings (``framework``), the rules as Python
with a stand-alone compactor (``python``), and that compactor itself (``compactor``): the
readable, standard-library twin of ``compaction``, tested against it."""

from .native import NativeSetting, native_settings, targets
from .native_gap import Gap, NativeComparison, gap_table, native_compare

__all__ = ["Gap", "NativeComparison", "NativeSetting", "gap_table", "native_compare", "native_settings", "targets"]
