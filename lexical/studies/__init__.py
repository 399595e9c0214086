"""Seed 004's human studies, run as annotation campaigns: ``rule_validation/`` (native speakers
judge mined variations and generated rules), ``selection_study/`` (native speakers choose the
variation each sentence needs) and ``demo`` (both studies answered by simulated annotators)."""
