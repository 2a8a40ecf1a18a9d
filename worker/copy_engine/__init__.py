"""The copy engine: watchers of target wallets, fan-out to configs, exactly-once mirroring.

One ``CopyEngine`` runs in each ``copytrade worker`` as a long-lived Trio task. It owns
its parts: ``TargetOwnership`` (leases on target wallets, a fair share of them), one
``TargetWatcher`` per owned target (Data API polling with a persisted cursor, accelerated
by the global RTDS feed), a ``QuoteSource`` (markets and live books), a ``FillExecutor``
(each fill decided into copy intents for every config copying that target, executed by
``services.copying.execution``) and ``CopierWallets`` (the copiers' opened accounts).
"""
