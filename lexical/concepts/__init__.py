"""Concepts with variations: browsing, admin edits and example selection for studies."""
