"""The HTTP facade: cold start of ``serve``, request throughput, pod creates per second, watch latency.

Every figure has a baseline measured in the same run:

* cold start: ``python -m harness serve`` from process start to the first 200 on ``GET /api``,
  against a bare Starlette app on uvicorn started the same way (the floor any Python server has);
* GET, LIST (1,000 pods), PATCH and create: requests per second from several concurrent clients in
  another process, against a bare Starlette endpoint answering the same JSON (a ratio of 0.5 means
  half the bare endpoint's throughput);
* pod creates per second into a world running every simulator (scheduler, kubelet, ...), against
  kwok's CI floor of 167/s (a reference figure, not measured here);
* watch latency p50/p99 with 100 watchers, from just before the write is sent to each watcher's
  receipt of the event, against a bare Starlette app that fans the same JSON out to 100 streams.

Each figure is the best of ``ROUNDS`` rounds (facade and baseline alternating). Load comes from one
spawned process (``aiohttp``, one connection per client) over loopback; the
servers run in threads of this process. Counts and durations are bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from benchmarks.timing import report
from harness.apiserver.http import create_app, run_server, url
from harness.apiserver.http.responses import encode
from harness.kube.names.meta import JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE
from harness.world.world import World

CLIENTS = 8
# Each figure is the best of a few rounds, facade and baseline alternating (a shared machine is noisy).
ROUNDS = 3
SECONDS_PER_RUN = 1.5
MAX_REQUESTS_PER_RUN = 20_000
WARM_UP_SECONDS = 0.3
LIST_PODS = 1_000
WATCHERS = 100
WATCH_WRITES = 200
COLD_START_RUNS = 5
START_TIMEOUT = 30.0
LOAD_TIMEOUT = 120.0
KWOK_CI_PODS_PER_SECOND = 167.0

NAMESPACE_PATH = "/api/v1/namespaces/default"
PODS_PATH = f"{NAMESPACE_PATH}/pods"
POD_PATH = PODS_PATH + "/{}"
CONFIGMAPS_PATH = f"{NAMESPACE_PATH}/configmaps"
TARGET_POD = "p-0"

# A bare uvicorn + Starlette process answering GET /api: the cold-start floor of a Python server.
BARE_SERVER = """\
import sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

async def api(request):
    return JSONResponse({"kind": "APIVersions", "versions": ["v1"]})

uvicorn.run(Starlette(routes=[Route("/api", api)]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def pod(name: str, node: str = "") -> dict[str, Any]:
    """A pod of a realistic size (the one the in-memory benchmarks use)."""
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.example/app:1.0",
                                            "env": [{"name": f"E{i}", "value": str(i)} for i in range(8)]}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "bench"},
                         "annotations": {"example.com/a": "x" * 64}},
            "spec": spec}


# -- servers ---------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bare_app(one: dict[str, Any], many: dict[str, Any]) -> Starlette:
    """Endpoints answering what the facade answers, with the same encoder and no API semantics."""
    streams: set[asyncio.Queue[bytes]] = set()

    async def get_pod(request: Request) -> Response:
        return Response(encode(one), media_type=JSON_CONTENT_TYPE)

    async def pods(request: Request) -> Response:
        if request.method == "POST":
            return Response(encode(json.loads(await request.body())), 201, media_type=JSON_CONTENT_TYPE)
        return Response(encode(many), media_type=JSON_CONTENT_TYPE)

    async def patch_pod(request: Request) -> Response:
        json.loads(await request.body())
        return Response(encode(one), media_type=JSON_CONTENT_TYPE)

    async def configmaps(request: Request) -> Response:
        if request.method == "POST":
            body = json.loads(await request.body())
            line = encode({"type": "ADDED", "object": body}) + b"\n"
            for queue in streams:
                queue.put_nowait(line)
            return Response(encode(body), 201, media_type=JSON_CONTENT_TYPE)
        if request.query_params.get("watch") != "1":
            return Response(encode({"kind": "ConfigMapList", "metadata": {"resourceVersion": "0"}, "items": []}),
                            media_type=JSON_CONTENT_TYPE)
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        streams.add(queue)

        async def events() -> AsyncIterator[bytes]:
            try:
                while True:
                    yield await queue.get()
            finally:
                streams.discard(queue)

        return StreamingResponse(events(), media_type=JSON_CONTENT_TYPE)

    return Starlette(routes=[
        Route(PODS_PATH + "/{name}", get_pod, methods=["GET"]),
        Route(PODS_PATH + "/{name}", patch_pod, methods=["PATCH"]),
        Route(PODS_PATH, pods, methods=["GET", "POST"]),
        Route(CONFIGMAPS_PATH, configmaps, methods=["GET", "POST"]),
    ])


def _api_world(pods: int) -> World:
    world = World(simulators=[])
    client = world.client()
    for i in range(pods):
        client.create(pod(f"p-{i}"))
    return world


# -- load (runs in the spawned process) ------------------------------------------------------------


def _unique_tag() -> str:
    # Names must not repeat across rounds against the same world (a create would be a 409).
    return f"{os.getpid()}-{time.monotonic_ns()}"


def _request(op: str, n: int, tag: str) -> tuple[str, str, bytes | None, dict[str, str]]:
    if op == "get":
        return "GET", POD_PATH.format(TARGET_POD), None, {}
    if op == "list":
        return "GET", PODS_PATH, None, {}
    if op == "patch":
        body = encode({"metadata": {"labels": {"n": str(n)}}})
        return "PATCH", POD_PATH.format(TARGET_POD), body, {"Content-Type": MERGE_PATCH_CONTENT_TYPE}
    if op == "create":
        return "POST", PODS_PATH, encode(pod(f"c-{tag}-{n}")), {"Content-Type": JSON_CONTENT_TYPE}
    raise ValueError(op)


async def _throughput(base: str, op: str, clients: int, seconds: float, limit: int) -> dict[str, float]:
    import aiohttp

    counter = iter(range(10**9))
    tag = _unique_tag()
    done = errors = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as session:

        async def client(deadline: float, counted: bool) -> None:
            nonlocal done, errors
            while time.perf_counter() < deadline and done < limit:
                method, path, body, headers = _request(op, next(counter), tag)
                async with session.request(method, base + path, data=body, headers=headers) as response:
                    await response.read()
                    if counted:
                        done += 1
                        errors += response.status >= 300

        await asyncio.gather(*(client(time.perf_counter() + WARM_UP_SECONDS, False) for _ in range(clients)))
        began = time.perf_counter()
        await asyncio.gather(*(client(began + seconds, True) for _ in range(clients)))
        elapsed = time.perf_counter() - began
    return {"rate": done / elapsed, "requests": done, "errors": errors}


async def _throughput_counting_all(base: str, op: str, clients: int, seconds: float, limit: int) -> dict[str, float]:
    import aiohttp

    counter = iter(range(10**9))
    tag = _unique_tag()
    done = served = errors = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as session:

        async def client(deadline: float, counted: bool) -> None:
            nonlocal done, served, errors
            while time.perf_counter() < deadline and done < limit:
                method, path, body, headers = _request(op, next(counter), tag)
                async with session.request(method, base + path, data=body, headers=headers) as response:
                    await response.read()
                    served += 1
                    errors += response.status >= 300
                    if counted:
                        done += 1

        await asyncio.gather(*(client(time.perf_counter() + WARM_UP_SECONDS, False) for _ in range(clients)))
        began = time.perf_counter()
        await asyncio.gather(*(client(began + seconds, True) for _ in range(clients)))
        elapsed = time.perf_counter() - began
    return {"rate": done / elapsed, "requests": done, "served": served, "errors": errors}


def throughput_counting_all(base: str, op: str, clients: int, seconds: float, limit: int) -> dict[str, float]:
    """As :func:`throughput`, also counting the warm-up's requests (``served``) and its errors."""
    return asyncio.run(_throughput_counting_all(base, op, clients, seconds, limit))


def throughput(base: str, op: str, clients: int, seconds: float, limit: int) -> dict[str, float]:
    """Requests per second of ``op`` against ``base`` from ``clients`` concurrent connections."""
    return asyncio.run(_throughput(base, op, clients, seconds, limit))


async def _watch_latency(base: str, watchers: int, writes: int) -> dict[str, float]:
    import aiohttp

    sent: dict[str, float] = {}
    seen: dict[str, int] = {}
    complete: dict[str, asyncio.Event] = {}
    samples: list[float] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async with session.get(base + CONFIGMAPS_PATH) as listed:
            rv = (json.loads(await listed.read()).get("metadata") or {}).get("resourceVersion") or "0"
        streams = [await session.get(base + CONFIGMAPS_PATH, params={"watch": "1", "resourceVersion": rv})
                   for _ in range(watchers)]

        async def read(stream: aiohttp.ClientResponse) -> None:
            async for line in stream.content:
                arrived = time.perf_counter()
                name = json.loads(line)["object"]["metadata"]["name"]
                samples.append(arrived - sent[name])
                seen[name] += 1
                if seen[name] == watchers:
                    complete[name].set()

        readers = [asyncio.create_task(read(s)) for s in streams]
        tag = _unique_tag()
        for i in range(writes):
            name = f"cm-{tag}-{i}"
            seen[name], complete[name] = 0, asyncio.Event()
            sent[name] = time.perf_counter()  # before sending: the event may beat the response
            async with session.post(base + CONFIGMAPS_PATH, data=encode({"metadata": {"name": name}}),
                                    headers={"Content-Type": JSON_CONTENT_TYPE}) as response:
                await response.read()
            await asyncio.wait_for(complete[name].wait(), 30)
        for task in readers:
            task.cancel()
        for stream in streams:
            stream.close()
    samples.sort()
    return {"p50": samples[len(samples) // 2], "p99": samples[int(len(samples) * 0.99)], "samples": len(samples)}


def watch_latency(base: str, watchers: int, writes: int) -> dict[str, float]:
    """p50/p99 seconds from just before a write is sent to each of ``watchers`` receiving its event."""
    return asyncio.run(_watch_latency(base, watchers, writes))


# -- measurements ----------------------------------------------------------------------------------


def _first_ok(command: list[str], port: int) -> float:
    """Seconds from starting ``command`` to its first 200 on ``GET /api``."""
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = began + START_TIMEOUT
        while time.perf_counter() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api", timeout=1.0).status_code == 200:
                    return time.perf_counter() - began
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"{command} exited with {process.returncode}")
            time.sleep(0.005)  # polling a port that is not listening yet: nothing to wait on
        raise RuntimeError(f"{command} did not answer within {START_TIMEOUT}s")
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cold_start() -> None:
    """``serve`` (every simulator) to its first 200 on GET /api, against a bare uvicorn process."""
    with tempfile.TemporaryDirectory() as folder:
        kubeconfig = str(Path(folder) / "kubeconfig")
        serve = min(_first_ok([sys.executable, "-m", "harness", "serve", "--port", str(port := _free_port()),
                               "--kubeconfig", kubeconfig, "--insecure-http"], port) for _ in range(COLD_START_RUNS))
        bare = min(_first_ok([sys.executable, "-c", BARE_SERVER, str(port := _free_port())], port)
                   for _ in range(COLD_START_RUNS))
    report("cold start of serve to the first 200 on GET /api", serve * 1e3, "ms", bare * 1e3,
           "a bare uvicorn + Starlette process")


def _serving(app: Any) -> tuple[str, Callable[[], None]]:
    server, port = run_server(app)
    return url("127.0.0.1", port), lambda: server.stop(10.0)


def request_throughput(load: concurrent.futures.Executor) -> None:
    """GET, LIST, PATCH and create per second through the facade, each against a bare endpoint."""
    world = _api_world(LIST_PODS)
    client = world.client()
    one = client.get("v1", "Pod", TARGET_POD, "default")
    many = client.list("v1", "Pod", "default")
    facade, stop_facade = _serving(create_app(world))
    bare, stop_bare = _serving(_bare_app(one, many))
    try:
        for op, label in (("get", "GET one pod"), ("list", f"LIST {LIST_PODS} pods"), ("patch", "PATCH (merge) a pod"),
                          ("create", "create a pod")):
            best = {"facade": 0.0, "bare": 0.0}
            for _ in range(ROUNDS):
                for name, base in (("facade", facade), ("bare", bare)):
                    job = load.submit(throughput, base, op, CLIENTS, SECONDS_PER_RUN, MAX_REQUESTS_PER_RUN)
                    figures = job.result(timeout=LOAD_TIMEOUT)
                    if figures["errors"]:
                        raise RuntimeError(f"{op} against {name}: {figures['errors']} failed requests")
                    best[name] = max(best[name], figures["rate"])
            report(f"{label}, {CLIENTS} clients", best["facade"], "req/s", best["bare"], "a bare Starlette endpoint")
    finally:
        stop_facade()
        stop_bare()


def _server_cpu_per_request(load: concurrent.futures.Executor, base: str) -> tuple[float, float]:
    """(creates per second, CPU seconds of this process per create) of one round against ``base``.

    The servers are threads of this process and the load runs in another, so this process's CPU
    time over a round is the server's: unlike the rate, it does not fall when other jobs take the
    machine's cores (the warm-up's requests are counted too, as they are served in the round)."""
    before = time.process_time()
    figures = load.submit(throughput_counting_all, base, "create", CLIENTS, SECONDS_PER_RUN, MAX_REQUESTS_PER_RUN
                          ).result(timeout=LOAD_TIMEOUT)
    cpu = time.process_time() - before
    if figures["errors"]:
        raise RuntimeError(f"create against {base}: {figures['errors']} failed requests")
    return figures["rate"], cpu / max(figures["served"], 1)


def pod_creates(load: concurrent.futures.Executor) -> None:
    """Pods created per second over HTTP into a world running every simulator (scheduled, started),
    and the server's CPU per create, each against a bare endpoint that parses the body and returns it."""
    world = World()
    world.client().create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}})
    world.settle()
    facade, stop = _serving(create_app(world))
    bare, stop_bare = _serving(_bare_app({}, {}))
    best = {"facade": (0.0, float("inf")), "bare": (0.0, float("inf"))}
    try:
        for _ in range(ROUNDS):
            for name, base in (("facade", facade), ("bare", bare)):
                rate, cpu = _server_cpu_per_request(load, base)
                best[name] = (max(best[name][0], rate), min(best[name][1], cpu))
    finally:
        stop()
        stop_bare()
    report(f"pod creates/s over HTTP, all simulators, {CLIENTS} clients", best["facade"][0], "pods/s",
           best["bare"][0], "a bare Starlette endpoint's creates/s")
    report("  server CPU per pod create, all simulators", best["facade"][1] * 1e6, "µs",
           best["bare"][1] * 1e6, "a bare Starlette endpoint's create")
    report("  creates/s one core would serve at that CPU", 1 / best["facade"][1], "pods/s",
           KWOK_CI_PODS_PER_SECOND, "kwok's CI floor (167/s, not measured here)")


def watch_latencies(load: concurrent.futures.Executor) -> None:
    """Watch event latency p50/p99 with 100 watchers, against a bare fan-out of the same JSON."""
    world = World(simulators=[])
    facade, stop_facade = _serving(create_app(world))
    bare, stop_bare = _serving(_bare_app({}, {}))
    best = {"facade": {"p50": float("inf"), "p99": float("inf")}, "bare": {"p50": float("inf"), "p99": float("inf")}}
    try:
        for _ in range(ROUNDS):
            for name, base in (("facade", facade), ("bare", bare)):
                figures = load.submit(watch_latency, base, WATCHERS, WATCH_WRITES).result(timeout=LOAD_TIMEOUT)
                for quantile in ("p50", "p99"):
                    best[name][quantile] = min(best[name][quantile], figures[quantile])
    finally:
        stop_facade()
        stop_bare()
    for quantile in ("p50", "p99"):
        report(f"watch latency {quantile}, {WATCHERS} watchers, {WATCH_WRITES} writes", best["facade"][quantile] * 1e3,
               "ms", best["bare"][quantile] * 1e3, "a bare Starlette fan-out")


PARTS = ("cold", "requests", "creates", "watch")


def main(parts: tuple[str, ...] = PARTS) -> None:
    """Run the given parts (``python -m benchmarks.http creates`` runs only the pod creates)."""
    print(f"== HTTP facade ({os.cpu_count()} CPUs, Python {sys.version.split()[0]}) ==", flush=True)
    if "cold" in parts:
        cold_start()
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as load:
        if "requests" in parts:
            request_throughput(load)
        if "creates" in parts:
            pod_creates(load)
        if "watch" in parts:
            watch_latencies(load)


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or PARTS)
