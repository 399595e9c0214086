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

# A listening socket per worker (SO_REUSEPORT): the kernel spreads new connections over the
# workers. With one shared socket, whichever worker was awake accepted them, and a gthread worker
# keeps a kept-alive connection for its whole life: with a few busy clients, all of them could
# land on one process, which then ran on one core while the other idled (8 annotators: 176
# requests/s with every connection on one worker, 340 with them split 4 and 4). Closing each
# connection after its response spread the load too, but cost 10 % (bench/README, "One process
# per connection").
reuse_port = True
keepalive = 30
timeout = 120
