"""The HTTP facade of the fake API server (Starlette on uvicorn)."""

from harness.apiserver.http.app import create_app
from harness.apiserver.http.protocol import ServedWorld
from harness.apiserver.http.serve import Server, bind, run_server, serve_forever, url, write_kubeconfig

__all__ = [
    "ServedWorld", "Server", "bind", "create_app", "run_server", "serve_forever", "url", "write_kubeconfig",
]
