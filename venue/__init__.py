"""The venue: Polymarket's Gamma, CLOB and Data APIs, and the sandbox that imitates them."""
