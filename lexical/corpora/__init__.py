"""Parallel corpora: streamed, all-or-nothing import (UI, API, command) and the corpus pages."""
