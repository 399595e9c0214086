"""gunicorn's settings for Hardset: ``gunicorn -c config/gunicorn.py config.wsgi``.

Any of them can still be given on the command line (``--bind``, ``--workers`` ...), which wins.
The load test (bench/annotation_load.py) runs the web server with these values.
"""

from __future__ import annotations

import os

# Two processes per core, two threads each for the requests that wait on the database.
# ``WEB_CONCURRENCY`` is the number of processes (the usual name): set it to twice the cores; each
# process holds up to ``threads`` database connections. About two requests in flight keep a core
# busy (two thirds of a request on the annotation hot path is Python, which one thread of a
# process runs at a time: the GIL). Spread over more processes, the same number of requests in
# flight keeps both cores fuller than 2 processes × 4 threads did: a gthread worker keeps a
# kept-alive connection for its whole life, and with 8 annotators on 2 processes the split was
# often 6 and 2, which left one core short of work; 6-10 % more requests a second at 8 annotators,
# as many or more at 32 (bench/README, "Two threads in twice the processes"). More threads per
# process only add requests that wait for the GIL, each wait costing context switches
# (bench/README, "CPU per request at 8 and 32 annotators").
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
worker_class = "gthread"
threads = 2

# Kept-alive connections, on one listening socket that all workers share. A gthread worker keeps
# a connection for its whole life, so a few busy clients (or a proxy's few upstream connections)
# can end up on one worker: once, all 8 simulated annotators of the load test did, and that
# process ran on one core while the other idled (176 requests/s against 300-340). Neither
# remedy paid off on average (bench/README, "Keep-alive and the spread of connections"):
# closing each connection spread the load but cost about a tenth of the rate, and a socket
# per worker (``reuse_port``) spread connections by hash, no better than this. Closing every
# 20th request's connection did not spread them either: the reconnections went mostly to the
# busiest worker, whose main thread was awake to accept them (bench/README, "A quiet day with
# 4 × 2").
keepalive = 30
timeout = 120
