"""Compaction Playground: `streamlit run app.py` (or `scripts/app`)."""

from playground.ui import main

main()
