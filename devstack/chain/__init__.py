"""The dev chain: anvil, our stand-in contracts and their compiler."""
