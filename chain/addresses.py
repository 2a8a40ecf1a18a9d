"""Polymarket's contract addresses on Polygon mainnet (chain 137), under the env var names.

The CTF positions of ordinary markets are backed by USDC.e; neg-risk markets' positions
are backed by the NegRiskAdapter's wrapped collateral. The exchanges are the CLOB V2 ones.
"""

from __future__ import annotations

POLYGON_CHAIN_ID = 137

POLYGON_MAINNET: dict[str, str] = {
    "PUSD_ADDRESS": "0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB",
    "USDCE_ADDRESS": "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174",
    "CTF_ADDRESS": "0x4D97DCd97eC945f40cF65F87097ACe5EA0476045",
    "CTF_EXCHANGE_ADDRESS": "0xE111180000d2663C0091e4f400237545B87B996B",
    "NEG_RISK_EXCHANGE_ADDRESS": "0xe2222d279d744050d28e00520010520000310F59",
    "NEG_RISK_ADAPTER_ADDRESS": "0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296",
}

# The NegRiskAdapter's wcol(); neg-risk token ids are derived with it as the collateral.
POLYGON_NEG_RISK_WRAPPED_COLLATERAL = "0x3A3BD7bb9528E159577F7C2e685CC81A765002E2"
