"""The keyed GET in one process: the WSGI app called directly, no server, no sockets but the
database's and Redis's.

Builds the product as ``copytrade serve`` does (a fresh SQLite database, the local Redis
under a run-unique prefix, the rate limit raised out of the way, the JSON log to a file
through ``logs.configure``'s handler), mints an API key and calls ``GET /api/users/me``
``--requests`` times per round, printing the thread's CPU per request (median of the
rounds) and the machine's load. ``--profile N`` prints cProfile's N most costly functions
(own time) over one more round: where Flask, werkzeug and our hooks spend a request::

    .venv/bin/python bench/api_inprocess.py --rounds 5 --requests 2000
    .venv/bin/python bench/api_inprocess.py --profile 40
"""

from __future__ import annotations

import argparse
import cProfile
import io
import logging
import os
import pstats
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--path", default="/api/users/me")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--sort", default="tottime", help="cProfile's order (cumulative...)")
    parser.add_argument("--callers", default="", metavar="PATTERN",
                        help="with --profile: also who calls the functions matching PATTERN")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="api-inprocess-"))
    os.environ.update({
        "COPYTRADE_INSTANCE": str(folder / "instance"),
        "DATABASE_URL": f"sqlite:///{folder / 'copytrade.db'}",
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        "REDIS_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:",
        "BASE_URL": "http://127.0.0.1:8000",
        "RATE_LIMIT_PER_SECOND": "1000000000", "RATE_LIMIT_BURST": "1000000000",
        "SMTP_URL": "", "LOG_FORMAT": "json", "LOG_LEVEL": "INFO"})
    from werkzeug.test import EnvironBuilder

    from app import create_app
    from models import User, database, migrate
    from schemas.vocabulary import ALL_SCOPES
    from services.identity import auth, keys
    from services.platform import logs
    from services.platform.principal import Principal

    bound = database.bind(os.environ["DATABASE_URL"])
    with bound.connection_context():
        migrate.migrate(bound)
    handler = logs.build_handler((folder / "requests.log").open("a"), fmt="json")
    handler._copytrade = True  # type: ignore[attr-defined]  # as logs.configure marks it
    logging.getLogger().handlers[:] = [handler]
    logging.getLogger().setLevel(logging.INFO)
    app = create_app()
    with app.app_context(), bound.connection_context():
        user = User.create(email="bench@example.com")
        session = Principal(user=user, kind="session", scopes=ALL_SCOPES,
                            credential_id=uuid.uuid4())
        secret = keys.create(session, "bench", ["read:account"], 30,
                             step_up_token=auth.issue_step_up(session).token).secret
    environ = EnvironBuilder(path=args.path, headers={"Authorization": f"Bearer {secret}"},
                             environ_base={"REMOTE_ADDR": "127.0.0.1"}).get_environ()
    statuses: list[str] = []

    def start_response(status: str, headers: list, exc_info: object = None) -> None:
        statuses.append(status)

    def one() -> None:
        body = app(dict(environ), start_response)
        for _ in body:
            pass
        getattr(body, "close", lambda: None)()

    for _ in range(200):
        one()
    assert statuses[-1].startswith("200"), statuses[-1]
    figures = []
    for _ in range(args.rounds):
        started = time.thread_time()
        for _ in range(args.requests):
            one()
        figures.append((time.thread_time() - started) / args.requests * 1e6)
    print(f"GET {args.path} in process: {statistics.median(figures):.0f} µs CPU/request "
          f"(rounds {', '.join(f'{f:.0f}' for f in figures)}), load {os.getloadavg()[0]:.1f}")
    if args.profile:
        profile = cProfile.Profile(time.thread_time)
        profile.enable()
        for _ in range(args.requests):
            one()
        profile.disable()
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).sort_stats(args.sort)
        stats.print_stats(args.profile)
        if args.callers:
            stats.print_callers(args.callers)
        print(out.getvalue())


if __name__ == "__main__":
    main()
