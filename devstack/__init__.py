"""Local-stack tooling: the sandbox venue, the dev chain, its faucet and ``copytrade up``.

Shipped with the wheel, but its dependencies only with the ``copytrade[sandbox]`` extra.
It imports nothing from the app; the app reaches it only from ``cli.py``, lazily.
"""
