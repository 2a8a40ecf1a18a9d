"""OAuth 2.1 for hosted agents: scopes in plain words, tokens and approvals (``tokens``),
client registration and metadata documents (``clients``), resource indicators (``resources``)
and the authlib glue (``server``). It stands on ``platform`` only.
"""
