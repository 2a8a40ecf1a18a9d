"""The dev chain's one exception (the app's chain errors are not ours to import)."""


class DevChainError(RuntimeError):
    """The dev chain could not be started, or a dev transaction failed."""
