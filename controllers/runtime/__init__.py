"""Cluster API's Runtime SDK: the ExtensionConfig API (webhook and discovery controller) and the client
that calls Runtime Extensions over HTTPS (see :mod:`controllers.runtime.client`)."""
