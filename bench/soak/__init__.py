"""The simulated week (`copytrade dev soak`): the whole local stack driven like its users
would, then the invariants every promise rests on, checked against the chain and the venue.

``world.py`` starts the stack (web, two workers, the sandbox on the dev chain) and talks to
its venue and chain; ``receiver.py`` is each follower's webhook endpoint; ``followers.py``
the followers (sign in, fund, copy, trade, claim, withdraw over the REST API);
``schedule.py`` the compressed days; ``invariants.py`` the checks; ``report.py`` the table.
"""
