"""A Python program using the scheduling-service-client wheel (npm run clients): imports every generated module, creates an account, an event, lists it, reads the user, and is refused with a wrong key.

Usage: client_test.py <host:port> <label>  with ADMIN_TOKEN in the environment, run by an interpreter the wheel is
installed for (test/api/clients.test.ts: the virtual environment the package's README makes, and one with the
oldest releases the wheel declares).
Prints one line, `client-check <label> <JSON of what it saw>`; exits non-zero (with the reason on stderr) when
anything is not as expected.
"""
import importlib
import json
import os
import pkgutil
import sys
import time
import warnings

import google.protobuf
import grpc

import scheduling


def fail(why):
    sys.stderr.write(f"FAIL: {why}\n")
    sys.exit(1)


def expect(condition, why):
    if not condition:
        fail(why)


def load_every_module():
    """Every module of the generated package, and the google.rpc ones the wheel depends on, imported; with what they warned."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        names = sorted(m.name for m in pkgutil.walk_packages(scheduling.__path__, "scheduling.") if not m.ispkg)
        for name in names:
            importlib.import_module(name)
        from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (the error details' types load)
        import scheduling_client  # noqa: F401
    return names, [str(w.message) for w in warned]


def main():
    target, label = sys.argv[1], sys.argv[2]
    modules, warned = load_every_module()
    from scheduling.v1 import admin_pb2, admin_pb2_grpc, event_pb2, event_pb2_grpc, user_pb2, user_pb2_grpc

    admin_token = os.environ["ADMIN_TOKEN"]
    tag = f"py-{os.getpid()}-{int(time.time() * 1000)}"
    with grpc.insecure_channel(target) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)

        admin = admin_pb2_grpc.AdminServiceStub(channel)
        created = admin.CreateAccount(
            admin_pb2.CreateAccountRequest(account=admin_pb2.AccountInput(email=f"{tag}@example.com", full_name="Py Client", timezone="London")),
            metadata=[("x-admin-token", admin_token)],
            timeout=10,
        )
        key = created.user.api_key
        expect(len(key) > 20, f"no api key in {created}")
        auth = [("x-api-key", key)]

        # A wrong key is refused with the gRPC status the contract names.
        try:
            user_pb2_grpc.UserServiceStub(channel).GetUser(user_pb2.GetUserRequest(), metadata=[("x-api-key", key + "x")], timeout=10)
            fail("GetUser with a wrong key succeeded")
        except grpc.RpcError as err:
            expect(err.code() == grpc.StatusCode.UNAUTHENTICATED, f"wrong key: {err.code()} {err.details()}")
            expect(err.details() == "Invalid api_key", f"wrong key message: {err.details()!r}")
            refused = f"{err.code().name} {err.details()}"

        events = event_pb2_grpc.EventServiceStub(channel)
        event = events.CreateEvent(
            event_pb2.CreateEventRequest(event=event_pb2.EventInput(name="Python Chat", url=f"python-chat-{tag}", slot_duration="30_minutes")),
            metadata=auth,
            timeout=10,
        ).event
        expect(event.name == "Python Chat" and event.slot_duration == "30 minutes", f"created event: {event}")
        listed = events.ListEvents(event_pb2.ListEventsRequest(), metadata=auth, timeout=10).events
        expect([e.id for e in listed] == [event.id], f"listed events: {[e.id for e in listed]} (created {event.id})")

        user = user_pb2_grpc.UserServiceStub(channel).GetUser(user_pb2.GetUserRequest(), metadata=auth, timeout=10).user
        expect(user.email == f"{tag}@example.com" and user.timezone == "London" and user.api_key == key, f"user: {user}")

    seen = {
        "versions": {"protobuf": google.protobuf.__version__, "grpcio": grpc.__version__},
        "modules": modules,
        "warnings": warned,
        "refused": refused,
        "event_url": event.url,
        "listed": len(listed),
    }
    print(f"client-check {label} {json.dumps(seen)}")


if __name__ == "__main__":
    main()
