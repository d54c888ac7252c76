"""What is written out: the request in any API format (``requests``), the strategy as framework
settings (``framework``), the rules as Python with a stand-alone compactor (``python``), and that
compactor itself (``twin``): the readable, standard-library twin of ``compaction``, tested
against it."""
