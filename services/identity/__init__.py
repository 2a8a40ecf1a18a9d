"""Who a user is and how they prove it: magic-code sign-in, sessions and step-up, sign-in
budgets, scoped API keys, bearer credentials to Principals, user profiles and the operator's
account controls, and purging what sign-in leaves behind. It may import every other domain.
"""
