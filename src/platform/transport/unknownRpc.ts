// Requests that are RPCs by their form (gRPC, gRPC-Web, Connect) but name no method this server serves: UNIMPLEMENTED in the caller's protocol, never REST's JSON 404.
import { Code } from "@connectrpc/connect";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import { ApiError, REASONS } from "../../domain/errors.js";
import { rpcErrorAnswer, sendRpcErrorAnswer, type ErrorAnswerTarget } from "./errorAnswer.js";

/** An RPC's path: `/<package>.<Service>/<Method>`, the package one or more dotted names (`/scheduling.v1.UserService/GetUser`). */
const RPC_PATH = /^\/((?:[A-Za-z_][A-Za-z0-9_]*\.)+[A-Za-z_][A-Za-z0-9_]*)\/([A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * Whether a request is an RPC by its form, whether or not its method is served: a gRPC or gRPC-Web content type, a
 * Connect stream's (`application/connect+...`), or a POST of Connect's unary JSON or binary (`application/json`,
 * `application/proto`) to an RPC's path. REST's paths (`/api/v1/...`) never have an RPC's form, and its callers
 * send JSON there: they keep the envelope.
 */
export function isRpcRequest(method: string | undefined, path: string, contentType: string): boolean {
  const type = contentType.toLowerCase();
  if (type.startsWith("application/grpc") || type.startsWith("application/connect+")) return true;
  if (method !== "POST" || !RPC_PATH.test(path)) return false;
  const essence = type.split(";")[0].trim();
  return essence === "application/json" || essence === "application/proto";
}

/** The refusal of an RPC no served method answers, worded as gRPC servers word it (grpc-go: "unknown service ..."). */
function unknownRpc(path: string, servedServices: ReadonlySet<string>): ApiError {
  const rpc = RPC_PATH.exec(path);
  const message =
    rpc === null
      ? `unknown RPC path ${path.slice(0, 200)}`
      : servedServices.has(rpc[1])
        ? `unknown method ${rpc[2].slice(0, 100)} for service ${rpc[1]}`
        : `unknown service ${rpc[1].slice(0, 200)}`;
  return new ApiError(Code.Unimplemented, message, { reason: REASONS.unknownMethod });
}

/**
 * Answers an RPC to a method no one serves as its protocol answers an error, with the details every error carries:
 * gRPC and gRPC-Web HTTP 200 with grpc-status 12 (their clients read nothing from an HTTP 404 but "404"), a Connect
 * stream its end-of-stream message, a Connect unary call HTTP 404 with `{"code": "unimplemented", ...}` (Connect's
 * own mapping of the code).
 */
export function answerUnknownRpc(res: ErrorAnswerTarget, path: string, contentType: string, servedServices: ReadonlySet<string>): void {
  const answer = rpcErrorAnswer(contentType, unknownRpc(path, servedServices));
  // The code's own status (501) says the server knows the procedure but not how; Connect's rule for a procedure it
  // does not have is 404, which its clients read as unimplemented. Only the unary form has an HTTP error status.
  if (answer.status === codeToHttpStatus(Code.Unimplemented)) answer.status = 404;
  sendRpcErrorAnswer(res, answer);
}
