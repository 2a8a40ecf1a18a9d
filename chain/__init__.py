"""The chain: trading-wallet custody, balances, transfers and claims over JSON-RPC (web3)."""
