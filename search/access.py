"""Who may see and edit the search app: staff. Topic trees are research-lead material, and runs
spend the lab's money and show unpublished data; anyone else gets a 404, so that their
existence does not leak. One place, so pages, API and exports agree."""

from __future__ import annotations

from core.access import is_active_staff

may_use_search = is_active_staff
