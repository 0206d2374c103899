"""zmigrate: move ZFS datasets between hosts fast, and see why a transfer is slow."""

__version__ = "0.1.0"
