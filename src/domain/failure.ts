// Why a call to an outside system failed, in words for a host: one line, a reason, no file paths, no addresses or ports of ours.
import { plainLine } from "./text.js";

/*
 * Node's network and TLS errors are written for whoever debugs Node: `connect ECONNREFUSED 127.0.0.1:18128`
 * names an address of ours, and a TLS failure carries OpenSSL's source path
 * (`…ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:`). A host reads
 * these texts (a webhook delivery's `error`, a calendar's `last_error`, a connect 422), so each known failure is
 * said in words by its code, and anything else keeps its first line with addresses and paths taken out.
 */
const BY_CODE: Readonly<Record<string, string>> = {
  ECONNREFUSED: "the server refused the connection (nothing listens at that address and port)",
  ECONNRESET: "the server closed the connection before it answered",
  EPIPE: "the server closed the connection before it answered",
  ECONNABORTED: "the server closed the connection before it answered",
  UND_ERR_SOCKET: "the server closed the connection before it answered",
  ETIMEDOUT: "the server did not answer in time",
  ESOCKETTIMEDOUT: "the server did not answer in time",
  UND_ERR_CONNECT_TIMEOUT: "the server did not answer in time",
  ENOTFOUND: "the server's name could not be found",
  EAI_AGAIN: "the server's name could not be looked up just now",
  EAI_NONAME: "the server's name could not be found",
  EHOSTUNREACH: "the server cannot be reached",
  ENETUNREACH: "the server cannot be reached",
  EHOSTDOWN: "the server cannot be reached",
  CERT_HAS_EXPIRED: "the server's certificate has expired",
  CERT_NOT_YET_VALID: "the server's certificate is not valid yet",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's certificate is not trusted (it is self-signed)",
  SELF_SIGNED_CERT_IN_CHAIN: "the server's certificate is not trusted (a self-signed certificate in its chain)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's certificate is not trusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the server's certificate is not trusted",
  UNABLE_TO_GET_ISSUER_CERT: "the server's certificate is not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's certificate is for another name",
  ERR_SSL_WRONG_VERSION_NUMBER: "a secure connection could not be made: the server does not speak HTTPS on that port",
  EPROTO: "a secure connection could not be made",
};

/** Words for failures known by their message only (libraries that wrap Node's errors keep the text, not the code). */
const BY_TEXT: ReadonlyArray<[RegExp, string]> = [
  [/wrong version number|ssl3_get_record:(packet length too long|http request)/i, BY_CODE.ERR_SSL_WRONG_VERSION_NUMBER],
  [/\bECONNREFUSED\b/, BY_CODE.ECONNREFUSED],
  [/\b(ECONNRESET|EPIPE)\b|socket hang up|other side closed/i, BY_CODE.ECONNRESET],
  [/\bETIMEDOUT\b/, BY_CODE.ETIMEDOUT],
  [/\b(ENOTFOUND|EAI_NONAME)\b/, BY_CODE.ENOTFOUND],
  [/\bEAI_AGAIN\b/, BY_CODE.EAI_AGAIN],
  [/\b(EHOSTUNREACH|ENETUNREACH)\b/, BY_CODE.EHOSTUNREACH],
  [/self[- ]signed certificate/i, BY_CODE.DEPTH_ZERO_SELF_SIGNED_CERT],
  [/certificate has expired/i, BY_CODE.CERT_HAS_EXPIRED],
  [/unable to verify|unable to get (local )?issuer/i, BY_CODE.UNABLE_TO_VERIFY_LEAF_SIGNATURE],
  [/altnames|does not match certificate/i, BY_CODE.ERR_TLS_CERT_ALTNAME_INVALID],
  [/\b(ssl|tls)\b.*(alert|routines|handshake)/i, BY_CODE.EPROTO],
];

function codeOf(err: unknown, depth = 0): string | undefined {
  if (typeof err !== "object" || err === null || depth > 3) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (code in BY_CODE || code.startsWith("ERR_SSL_"))) return code;
  return codeOf((err as { cause?: unknown }).cause, depth + 1);
}

/**
 * What a host is told of an outbound failure (a network error, a TLS error, or a text that may carry one): its
 * reason in words, as one line; never a path, an address or a port.
 */
export function failureInWords(err: unknown): string {
  const code = codeOf(err);
  // EPROTO and OpenSSL's codes say only that TLS failed; the message says how ("wrong version number").
  if (code !== undefined && code !== "EPROTO" && BY_CODE[code] !== undefined) return BY_CODE[code];
  const text = typeof err === "string" ? err : err instanceof Error ? err.message : String(err);
  for (const [pattern, words] of BY_TEXT) if (pattern.test(text)) return words;
  if (code !== undefined) return BY_CODE.EPROTO;
  return plainLine(text) || "the call failed";
}
