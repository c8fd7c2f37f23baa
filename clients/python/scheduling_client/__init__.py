"""Clients of the scheduling service over gRPC: one stub per service of scheduling.v1 on a channel that sends the API key (or the admin token) with every call.

The messages and stubs themselves are generated from the service's proto/ at build, into ``scheduling.v1``
(``from scheduling.v1 import event_pb2``); this module only connects them.
"""
import collections
import importlib
import pkgutil

import grpc

import scheduling.v1

__all__ = ["Clients", "connect"]


class _CallDetails(
    collections.namedtuple("_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")),
    grpc.ClientCallDetails,
):
    pass


class _Metadata(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds fixed metadata (the credentials) to every call, of every kind."""

    def __init__(self, pairs):
        self._pairs = list(pairs)

    def _details(self, details):
        return _CallDetails(
            details.method,
            details.timeout,
            list(details.metadata or []) + self._pairs,
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation, details, request_iterator):
        return continuation(self._details(details), request_iterator)

    def intercept_stream_stream(self, continuation, details, request_iterator):
        return continuation(self._details(details), request_iterator)


class Clients:
    """One stub per service of scheduling.v1, under the service's proto name (``clients.EventService``), over one channel.

    The services are found in the generated modules, so a service added to proto/ is here after the next build.
    Close the channel when done: ``clients.close()``, or use ``with connect(...) as clients:``.
    """

    def __init__(self, channel):
        self.channel = channel
        for module_info in pkgutil.iter_modules(scheduling.v1.__path__):
            if not module_info.name.endswith("_pb2_grpc"):
                continue
            module = importlib.import_module(f"scheduling.v1.{module_info.name}")
            for name, value in vars(module).items():
                if name.endswith("ServiceStub") and isinstance(value, type):
                    setattr(self, name[: -len("Stub")], value(channel))

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(target="localhost:8080", api_key=None, admin_token=None, credentials=None, options=None):
    """Clients of every service at ``target`` (``host:port``).

    ``api_key`` is sent as ``x-api-key`` (every service but AdminService and PublicBookingService needs one),
    ``admin_token`` as ``x-admin-token`` (AdminService). ``credentials`` (``grpc.ssl_channel_credentials()``) for
    TLS; without, plaintext HTTP/2, as the service speaks on its own port.
    """
    if credentials is None:
        channel = grpc.insecure_channel(target, options)
    else:
        channel = grpc.secure_channel(target, credentials, options)
    pairs = [(key, value) for key, value in (("x-api-key", api_key), ("x-admin-token", admin_token)) if value is not None]
    if pairs:
        channel = grpc.intercept_channel(channel, _Metadata(pairs))
    return Clients(channel)
