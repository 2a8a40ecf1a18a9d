"""Trading accounts and every movement of money or rights: custody and the deposit wallet,
onboarding, session keys, the user's identity at the venue, readiness (and whether the chain
agrees with the database: ``chain_agreement``), deposits, wraps,
withdrawals, claims, and the senders that move money once (on chain and through the relayer).
It stands on ``platform`` and ``markets``.
"""
