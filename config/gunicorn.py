"""gunicorn's settings for Hardset: ``gunicorn -c config/gunicorn.py config.wsgi``.

Any of them can still be given on the command line (``--bind``, ``--workers`` ...), which wins.
The load test (bench/annotation_load.py) runs the web server with these values.
"""

from __future__ import annotations

import os

# A process per core, threads for the requests that wait on the database (most of a request's
# time on the annotation hot path). ``WEB_CONCURRENCY`` is the usual way to say how many cores.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = 8

# No keep-alive between gunicorn and whatever talks to it. A gthread worker keeps a kept-alive
# connection for its whole life, and whichever worker is awake accepts the new ones: with a few
# busy clients, all of them landed on one process, which then ran on one core while the other
# idled (8 annotators: 176 requests/s against 340 with the connections split 4 and 4). Closing
# after each response lets every request go to a worker that is free. Browsers keep their
# connections to the TLS proxy in front, which is where keep-alive saves them round trips.
keepalive = 0
timeout = 120
