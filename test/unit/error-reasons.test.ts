// The reasons and fields an error carries for its google.rpc details (callers.md "Errors programs can read"): pure functions of src/domain/errors.ts.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ApiError, blank, codeName, fieldOfMessage, invalid, missingParams, notAllowed, notFound, reasonOfCode, tooManyRequests, unavailable } from "../../src/domain/errors.js";

describe("the field a validation message names", () => {
  it.each([
    ["slot_duration is not included in the list", "slot_duration"],
    ["location.host_contact_number is not a valid phone number", "location.host_contact_number"],
    ["answers[2].question_id is not a question of this event's form", "answers[2].question_id"],
    ['answers: "Company" is required', "answers"],
    ["guest_emails are not allowed for this event", "guest_emails"],
    ["Idempotency-Key must be 1 to 255 printable ASCII characters", "Idempotency-Key"],
    ["date_to must not be before date_from", "date_to"],
    ["bookings[3].event_id does not name an event", "bookings[3].event_id"],
  ])("%s: %s", (message, field) => {
    expect(fieldOfMessage(message)).toBe(field);
    expect(invalid(message).fieldViolations).toEqual([{ field, description: message }]);
  });

  it.each(["the event no longer takes bookings", "no calendar found: none", "request body is not valid", "an account may have at most 5 webhooks"])(
    "none in words: %s",
    (message) => expect(fieldOfMessage(message)).toBeUndefined(),
  );

  it("an explicit field wins over the message's words", () => {
    expect(invalid("authorize zoom first", "provider").fieldViolations).toEqual([{ field: "provider", description: "authorize zoom first" }]);
    expect(() => blank("name")).toThrow(expect.objectContaining({ reason: "INVALID_VALUE", fieldViolations: [{ field: "name", description: "name can't be blank" }] }));
  });
});

describe("reasons", () => {
  it("each factory raises its family's reason", () => {
    expect(missingParams({ event: ["name", "url"], user: [] })).toMatchObject({
      reason: "MISSING_PARAMS",
      fieldViolations: [
        { field: "event.name", description: "event.name is missing" },
        { field: "event.url", description: "event.url is missing" },
        { field: "user", description: "user is missing" },
      ],
    });
    expect(notAllowed("locale", ["en", "fr"], "locale is not included in the list")).toMatchObject({ reason: "INVALID_VALUE", fieldViolations: [{ field: "locale" }] });
    expect(notFound("event not found")).toMatchObject({ reason: "NOT_FOUND", info: { resource: "event" } });
    expect(tooManyRequests(7)).toMatchObject({ reason: "RATE_LIMITED", code: Code.ResourceExhausted });
    expect(tooManyRequests(7).metadata.get("retry-after")).toBe("7");
    expect(unavailable().metadata.get("retry-after")).toBe("1");
    expect(new ApiError(Code.FailedPrecondition, "changes are no longer kept", { reason: "CHANGES_EXPIRED", httpStatus: 410 }).reason).toBe("CHANGES_EXPIRED");
  });

  it("a code without a family of its own is its name", () => {
    expect(codeName(Code.DeadlineExceeded)).toBe("DEADLINE_EXCEEDED");
    expect(codeName(Code.PermissionDenied)).toBe("PERMISSION_DENIED");
    expect(reasonOfCode(Code.Unauthenticated)).toBe("UNAUTHENTICATED");
    expect(reasonOfCode(Code.InvalidArgument)).toBe("INVALID_VALUE");
    expect(new ApiError(Code.Aborted, "x").reason).toBe("ABORTED");
  });
});
