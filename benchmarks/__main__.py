"""``python -m benchmarks``: run every benchmark and print its figures."""

from __future__ import annotations

from benchmarks import apiserver, http, machine


def main() -> None:
    apiserver.main()
    http.main()
    machine.main()


if __name__ == "__main__":
    main()
