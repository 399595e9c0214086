"""Transfers (seed 001 §3.3–3.5): the texts of finished breaker runs translated by other systems
into other languages and scored again: configuration, form, rounds, the matrix, pages."""
