"""Compaction Playground: count, compact and summarize LLM agent conversations.

The engine, one idea per module, in the order data flows through it: ``formats`` (import and
export) → ``model`` → ``tokens`` (count) → ``compaction`` (rules from ``rules``) → ``summarize``
→ ``report`` → ``view``/``render``. ``engine.optimize`` runs the whole optimizer. The engine
never imports Streamlit; the page lives in ``playground.ui``.
"""
