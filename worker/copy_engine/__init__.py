"""The copy engine: watchers of target wallets, fan-out to configs, exactly-once mirroring.

One ``CopyEngine`` runs in each ``copytrade worker`` as a long-lived Trio task. It holds
leases on target wallets (``leases.py``), and for each target it owns runs one watcher
(Data API polling with a persisted cursor, accelerated by the global RTDS feed) and one
executor that turns each new target fill into copy intents for every config copying that
target (``store.py``) and places their orders (``placement.py``).
"""
