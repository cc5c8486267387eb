"""Compatibility frontends: APIs of other frameworks running on xlapy (see compat.v1)."""
