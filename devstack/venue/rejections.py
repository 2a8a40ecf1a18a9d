"""What the venue says when it refuses a request: the exception and the venue's own texts."""

from __future__ import annotations

# Venue error texts (samples README "Errors" and "Deposit wallets").
ERR_INVALID_SIGNATURE = "invalid signature"
ERR_SIGNER_NOT_API_KEY = "the order signer address has to be the address of the API KEY"
ERR_OWNER_NOT_API_KEY = "the order owner has to be the owner of the API KEY"
ERR_EOA_REFUSED = "maker address not allowed, please use the deposit wallet flow"
ERR_BALANCE = "not enough balance / allowance"
ERR_PAYLOAD = "Invalid order payload"
ERR_FOK = "order couldn't be fully filled. FOK orders are fully filled or killed."
ERR_FAK = (
    "no orders found to match with FAK order. FAK orders are partially filled or killed "
    "if no match is found."
)
# A post-only order that would match at once (ACCOUNTS.md §7.2, ts-sdk order-response.ts).
ERR_POST_ONLY_CROSSES = "invalid post-only order: order crosses book"
ERR_UNAUTHORIZED = "Unauthorized/Invalid api key"
ERR_L1 = "Invalid L1 Request headers"
# POST /auth/api-key for an (address, nonce) that has creds already (ACCOUNTS.md §4).
ERR_CREATE_KEY = "Could not create api key"
# GET /data/orders filtered by asset_id without market, refused from 2026-12-14 (ACCOUNTS.md
# §12 says the filter needs market; the venue's wording is not published: ours).
ERR_ASSET_WITHOUT_MARKET = "market is required when filtering open orders by asset_id"


class VenueRejection(Exception):
    """A request the venue refuses; becomes {"error": message} with `status`."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
