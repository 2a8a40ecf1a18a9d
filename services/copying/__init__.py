"""Copy trading: the pure mirroring rules (``mirror``), copy configs (``configs``), intents
recorded exactly once, their reservations against the exposure cap and budgets
(``reservations``), their execution, the copies of pending matches the chain did not confirm
(``pending_matches``), the copiers' venue accounts and PnL history. It stands
on ``platform``, ``markets``, ``wallets`` and ``trading``.
"""
