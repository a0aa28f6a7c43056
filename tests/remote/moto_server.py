"""moto's S3 server (as `python -m moto.server` runs it) with its conditional writes made
atomic, as S3's are: moto checks If-Match / If-None-Match and then stores the object in two
steps, so two concurrent PUTs with the same ETag could both pass the check under load, a lost
update that real S3 never allows. Requests carrying those headers are served one at a time.

    python tests/remote/moto_server.py HOST PORT
"""

from __future__ import annotations

import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

_conditional = threading.Lock()


def atomic_conditional_writes(app):
    def serve(environ, start_response):
        if "HTTP_IF_MATCH" not in environ and "HTTP_IF_NONE_MATCH" not in environ:
            return app(environ, start_response)
        with _conditional:  # the whole answer is made under the lock
            result = app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                if hasattr(result, "close"):
                    result.close()

    return serve


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True
    run_simple(host, port, atomic_conditional_writes(app), threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
