"""A small HTTP server on 127.0.0.1 for the download tests (torch.hub, torchvision's datasets).

    with LoopbackServer() as server:
        server.add("/files/a.bin", b"...")             # 200 with Content-Length
        server.add("/gone", status=404)
        server.add("/stream", b"...", length=False)     # no Content-Length (read to the end)
        server.add("/old", status=302, headers={"Location": "/files/a.bin"})
        server.add("/api", b"[]", refuse_header="Authorization")  # 401 with that header
        urlopen(server.url + "/files/a.bin")
        server.requests                                 # [(method, path, headers), ...]

:func:`github_via` routes every ``https://`` request of ``urllib.request.urlopen`` (the opener
torch.hub and torchvision use) to ``http://127.0.0.1:<port>/<host>/<path>``, so code that builds
real GitHub URLs can be tested against the server without a network. Everything is bound to the
loopback address, every socket has a timeout, and the server thread is stopped and joined when
the ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import http.server
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

TIMEOUT_S = 20  # no test request takes longer; a stuck client cannot hold the server


@dataclass
class _Route:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    length: bool = True
    refuse_header: str | None = None  # answer 401 to a request that carries this header


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    timeout = TIMEOUT_S
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers

    def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
        self.server.requests.append(("GET", self.path, dict(self.headers)))
        route = self.server.routes.get(self.path)
        if route is None:
            route = self.server.routes.get(self.path.split("?")[0], _Route(status=404))
        if route.refuse_header is not None and route.refuse_header in self.headers:
            route = _Route(b"{}", 401)
        self.send_response(route.status)
        for key, value in route.headers.items():
            self.send_header(key, value)
        if route.length:
            self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        try:
            self.wfile.write(route.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a client may stop reading early (a redirect probe does)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # quiet: pytest shows stderr of failing tests


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, _Route] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []


class LoopbackServer:
    """An HTTP server on 127.0.0.1 (a free port) answering the routes added to it."""

    def __enter__(self) -> LoopbackServer:
        self._server = _Server()
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(TIMEOUT_S)

    @property
    def requests(self) -> list[tuple[str, str, dict[str, str]]]:
        return self._server.requests

    def add(self, path: str, body: bytes = b"", *, status: int = 200,
            headers: dict[str, str] | None = None, length: bool = True,
            refuse_header: str | None = None) -> str:
        """Answer GET ``path`` (with its query, or any query when given without one); returns
        the full URL."""
        self._server.routes[path] = _Route(body, status, dict(headers or {}), length,
                                           refuse_header)
        return self.url + path


class _HttpsToLoopback(urllib.request.BaseHandler):
    """urllib handler: ``https://host/path`` is fetched as ``http://127.0.0.1:port/host/path``."""

    handler_order = 50  # before urllib's own https (and proxy) handlers

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.inner = urllib.request.build_opener()  # plain http, redirects followed

    def https_open(self, req: urllib.request.Request):  # noqa: ANN201
        parts = urlsplit(req.full_url)
        target = f"{self.server.url}/{parts.netloc}{parts.path}"
        if parts.query:
            target += "?" + parts.query
        return self.inner.open(urllib.request.Request(target, headers=dict(req.header_items())),
                               timeout=TIMEOUT_S)


@contextlib.contextmanager
def github_via(server: LoopbackServer) -> Iterator[None]:
    """Within the block, ``urlopen("https://HOST/PATH")`` asks ``server`` for ``/HOST/PATH``."""
    urllib.request.install_opener(urllib.request.build_opener(_HttpsToLoopback(server)))
    try:
        yield
    finally:
        urllib.request.install_opener(None)  # back to urllib's default opener
