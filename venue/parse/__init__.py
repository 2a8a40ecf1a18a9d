"""Venue JSON -> models, one module per API: pure functions, numbers as exact Decimals.

``values`` reads JSON values (and raises ``MalformedResponse``); ``gamma``, ``clob`` and
``data_api`` read the HTTP APIs' answers; ``feeds`` reads the websocket frames (the CLOB
market channel and RTDS).
"""
