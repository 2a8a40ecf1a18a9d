"""Orders and what they became: plan, preview, place, reconcile, list and cancel; fills and
settlement; positions (the wallet's, and each copy config's at average cost); paper trading;
trades and statistics. It stands on ``platform``, ``markets`` and ``wallets``.
"""
