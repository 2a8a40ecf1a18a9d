"""The platform every domain stands on: the process runtime and its wiring, settings-built
clients (venue, chain, Redis, the job queue), the error tree, who is calling (the Principal),
plan tiers, logs, metrics, rate limits, idempotency, guarded outbound fetches, mail, and the
workers' coordination in Redis (registry, target leases, control nudges, operator views).
It imports no other domain of ``services``.
"""
