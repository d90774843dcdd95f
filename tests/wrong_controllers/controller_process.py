"""``python -m tests.wrong_controllers.controller_process [python -m controllers options]``: the reference
controllers as a process (``controllers.__main__``) with the wrong variant ``LIFECYCLE_TCK_WRONG`` names
applied first: the third-party command of ``--target controller`` in the mutation self-test."""

from __future__ import annotations

import sys

from tests.wrong_controllers.catalogue import apply_from_env

if __name__ == "__main__":
    apply_from_env()
    from controllers.__main__ import main
    sys.exit(main())
