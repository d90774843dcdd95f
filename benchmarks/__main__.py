"""``python -m benchmarks``: run every benchmark and print its figures."""

from __future__ import annotations

from benchmarks import apiserver


def main() -> None:
    apiserver.main()


if __name__ == "__main__":
    main()
