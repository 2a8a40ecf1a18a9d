"""Peewee models, one module per aggregate, bound to ``models.base.db`` at start-up."""

from models.base import BaseModel, db
from models.market import Market, MarketToken, MarketTranslation
from models.user import User

__all__ = ["BaseModel", "Market", "MarketToken", "MarketTranslation", "User", "db"]
