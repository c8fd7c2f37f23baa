#!/usr/bin/python3
"""A Python program using the stubs of the scheduling-service-client wheel (npm run clients): creates an account, an event, lists it, reads the user.

Usage: client_test.py <host:port>  with ADMIN_TOKEN in the environment, run by an interpreter the wheel is installed
for (test/api/clients.test.ts: the virtual environment the package's README makes).
Prints one JSON line with what it saw; exits non-zero (with the reason on stderr) when anything is not as expected.
"""
import json
import os
import sys
import time

import grpc

from scheduling.v1 import admin_pb2, admin_pb2_grpc, event_pb2, event_pb2_grpc, user_pb2, user_pb2_grpc


def fail(why):
    sys.stderr.write(f"FAIL: {why}\n")
    sys.exit(1)


def expect(condition, why):
    if not condition:
        fail(why)


def main():
    target = sys.argv[1]
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

    print(json.dumps({"user_id": user.id, "email": user.email, "event_id": event.id, "event_url": event.url, "listed": len(listed)}))


if __name__ == "__main__":
    main()
