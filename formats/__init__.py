"""File formats every app reads: pure Python, no Django, no app imports."""
