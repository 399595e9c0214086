"""Write use-cases of the annotation app, one module per seam: ``campaigns`` (create, import,
items, attention checks), ``enrollment`` (sign-up, admission, organisers' actions), ``claims``
(the next item) and ``submissions`` (drafts, activity, submission). What they refuse, and the
HTTP status of each refusal, is in ``annotation.refusals``.

Everything that changes annotation rows goes through here, from pages, the API, management
commands and other apps (which create campaigns with ``campaigns.create_campaign`` and listen
to ``annotation.signals.item_completed``). Nothing is re-exported from this package: import the
module that holds the use-case.
"""
