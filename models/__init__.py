"""Peewee models, one module per aggregate, bound to ``models.base.db`` at start-up."""

from models.base import BaseModel, db
from models.idempotency import IdempotencyRecord
from models.identity import ApiKey, LoginCode, RevokedSession, SignInEvent
from models.market import Market, MarketToken, MarketTranslation
from models.user import User

__all__ = [
    "ApiKey", "BaseModel", "IdempotencyRecord", "LoginCode", "Market", "MarketToken",
    "MarketTranslation", "RevokedSession", "SignInEvent", "User", "db",
]
