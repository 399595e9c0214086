"""gunicorn's settings for Hardset: ``gunicorn -c config/gunicorn.py config.wsgi``.

Any of them can still be given on the command line (``--bind``, ``--workers`` ...), which wins.
The load test (bench/annotation_load.py) runs the web server with these values.
"""

from __future__ import annotations

import os

# A process per core, threads for the requests that wait on the database. ``WEB_CONCURRENCY`` is
# the usual way to say how many cores. About two requests in flight keep a core busy (a request
# on the annotation hot path spends two thirds of its time in Python, which one thread at a time
# runs: the GIL); four leave room for a slow one. More threads only add requests that wait for
# the GIL, and each wait costs context switches in the worker and a busy backend in PostgreSQL:
# at 8 threads the CPU per request rose with the number of annotators (bench/README, "CPU per
# request at 8 and 32 annotators").
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = 4

# Kept-alive connections, on one listening socket that all workers share. A gthread worker keeps
# a connection for its whole life, so a few busy clients (or a proxy's few upstream connections)
# can end up on one worker: once, all 8 simulated annotators of the load test did, and that
# process ran on one core while the other idled (176 requests/s against 300-340). Neither
# remedy paid off on average (bench/README, "Keep-alive and the spread of connections"):
# closing each connection spread the load but cost about a tenth of the rate, and a socket
# per worker (``reuse_port``) spread connections by hash, no better than this.
keepalive = 30
timeout = 120
