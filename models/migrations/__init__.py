"""Migration modules ``mNNNN_name.py``; see models/migrate.py."""
