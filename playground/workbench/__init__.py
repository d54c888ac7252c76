"""The page's material, without Streamlit: presets, lessons, the conversation builder, saved
workspaces and the defaults a person's own conversation starts from."""
