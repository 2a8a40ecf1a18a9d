"""Markets: what is traded. The catalogue mirrored from Gamma, discovery and details shared by
REST, MCP and the dashboard, translations, text folding for search, and walking a live book.
It stands on ``platform`` only.
"""
