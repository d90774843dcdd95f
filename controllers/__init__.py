"""Reference controllers: they talk to clusters only through :mod:`harness.client` (see ``registry``)."""
