// An outbound failure in words for a host (src/domain/failure.ts): one line, a reason, no file path, no address or port.
import { describe, expect, it } from "vitest";
import { failureInWords } from "../../src/domain/failure.js";
import { plainLine } from "../../src/domain/text.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/** What no text a host reads may hold. */
function expectClean(text: string): void {
  expect(text).not.toMatch(/\n/);
  expect(text).not.toMatch(/\d{1,3}(\.\d{1,3}){3}/);
  expect(text).not.toMatch(/:\d{2,5}\b/);
  expect(text).not.toMatch(/\.(c|h|js|ts|cc)\b/);
  expect(text).not.toMatch(/deps\/|openssl\//);
}

describe("failureInWords", () => {
  it.each([
    [withCode("C0DCB5F7:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n", "ERR_SSL_WRONG_VERSION_NUMBER"), "a secure connection could not be made: the server does not speak HTTPS on that port"],
    [withCode("connect ECONNREFUSED 127.0.0.1:18128", "ECONNREFUSED"), "the server refused the connection (nothing listens at that address and port)"],
    [withCode("connect ECONNREFUSED ::1:443", "ECONNREFUSED"), "the server refused the connection (nothing listens at that address and port)"],
    [withCode("getaddrinfo ENOTFOUND calendar.example.invalid", "ENOTFOUND"), "the server's name could not be found"],
    [withCode("read ECONNRESET", "ECONNRESET"), "the server closed the connection before it answered"],
    [withCode("self-signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT"), "the server's certificate is not trusted (it is self-signed)"],
    [withCode("Hostname/IP does not match certificate's altnames: Host: a. is not in the cert's altnames: DNS:b", "ERR_TLS_CERT_ALTNAME_INVALID"), "the server's certificate is for another name"],
    [withCode("C0:error:0A000418:SSL routines:ssl3_read_bytes:tlsv1 alert unknown ca:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1605:SSL alert number 48", "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA"), "a secure connection could not be made"],
  ])("says %s in words", (err, words) => {
    expect(failureInWords(err)).toBe(words);
    expectClean(failureInWords(err));
  });

  it("reads the code of a wrapped error's cause, and the words of a message that lost its code", () => {
    expect(failureInWords(new Error("fetch failed", { cause: withCode("connect ECONNREFUSED 10.0.0.5:80", "ECONNREFUSED") }))).toBe(
      "the server refused the connection (nothing listens at that address and port)",
    );
    expect(failureInWords("request to https://x/ failed, reason: connect ECONNREFUSED 127.0.0.1:18128")).toBe("the server refused the connection (nothing listens at that address and port)");
    expect(failureInWords(new Error("write EPROTO 1234:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:355:"))).toBe(
      "a secure connection could not be made: the server does not speak HTTPS on that port",
    );
  });

  it("keeps anything else as its first line, without addresses, ports or paths", () => {
    const text = failureInWords(new Error("boom at 192.168.1.20:8443 via [fe80::1]:80 in /srv/app/node_modules/x/lib/y.js:10:3\n    at stack (z.js:1:1)"));
    expect(text).toBe("boom at (address) via (address) in (file)");
    expectClean(text);
    expect(plainLine("the server answered 503")).toBe("the server answered 503");
    // Times and ratios are not addresses.
    expect(plainLine("busy from 10:30:00 to 11:00")).toBe("busy from 10:30:00 to 11:00");
  });
});
