// Builds the Express router of /api/v1 from the route table: body limits, the rows, 403 rows, 404 and body errors.
import { PICTURE_MAX_BYTES } from "../domain/user.js";
import express, { type NextFunction, type Request, type Response } from "express";
import { authenticate } from "../services/context.js";
import { UserService } from "../../gen/scheduling/v1/user_pb.js";
import { sendEnvelope } from "./envelope.js";
import { errorAnswer } from "./errors.js";
import type { JsonObject } from "./json.js";
import { MultipartError, readMultipart } from "./multipart.js";
import { contextFor, dispatch, type Implementations, type RestInput, type RestRoute, type RpcRoute } from "./table.js";

export const JSON_BODY_LIMIT = "1mb";
export const PICTURE_FIELD = "user[profile_picture]";

function isMultipart(req: Request): boolean {
  return /^multipart\/form-data/i.test(req.headers["content-type"] ?? "");
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Multipart picture upload → the UploadProfilePicture request as proto JSON. */
async function pictureBody(req: Request): Promise<JsonObject> {
  if (!isMultipart(req)) {
    // A JSON body can only carry the picture as text, which is refused in the service like a text form field.
    const body: unknown = req.body;
    const user = isObject(body) && isObject(body.user) ? body.user : {};
    const sent = user.profile_picture;
    return { user: sent === undefined || sent === null ? {} : { profile_picture_text: typeof sent === "string" ? sent : JSON.stringify(sent) } };
  }
  const form = await readMultipart(req, PICTURE_MAX_BYTES);
  const file = form.files.get(PICTURE_FIELD);
  if (file) return { user: { profile_picture: file.bytes.toString("base64"), filename: file.filename } };
  const text = form.fields.get(PICTURE_FIELD);
  if (text !== undefined) return { user: { profile_picture_text: text } };
  return { user: {} };
}

async function readInput(route: RpcRoute, req: Request): Promise<RestInput> {
  const params = req.params as Record<string, string>;
  const query = req.query as Record<string, unknown>;
  if (route.body === "multipart") return { params, query, body: await pictureBody(req) };
  if (route.body === "none") return { params, query, body: {} };
  const body: unknown = req.body;
  if (body === undefined || body === null) return { params, query, body: {} };
  if (!isObject(body)) throw new BodyShapeError();
  return { params, query, body };
}

class BodyShapeError extends Error {}

export function createRestRouter(routes: RestRoute[], impls: Implementations): express.Router {
  const router = express.Router({ caseSensitive: false, strict: false });
  // JSON is read whatever the declared type (curl -d sends form encoding); multipart is left to its route.
  router.use(express.json({ limit: JSON_BODY_LIMIT, strict: false, type: (req) => !isMultipart(req as Request) }));

  for (const route of routes) {
    const verb = route.method === "ALL" ? "all" : (route.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete");
    if (route.kind === "session_only") {
      router[verb](route.path, async (req: Request, res: Response) => {
        try {
          const method = UserService.method.getUser;
          await authenticate(contextFor(req, res, UserService, method));
          sendEnvelope(res, 403, route.message);
        } catch (err) {
          const a = errorAnswer(err);
          res.set(a.headers);
          sendEnvelope(res, a.httpStatus, a.message, a.data);
        }
      });
      continue;
    }
    router[verb](route.path, async (req: Request, res: Response) => {
      let input: RestInput;
      try {
        input = await readInput(route, req);
      } catch (err) {
        if (err instanceof BodyShapeError) return sendEnvelope(res, 400, "request body must be a JSON object");
        if (err instanceof MultipartError) return sendEnvelope(res, 400, `malformed multipart body: ${err.message}`);
        throw err;
      }
      await dispatch(route, impls, req, res, input);
    });
  }

  router.use((_req: Request, res: Response) => sendEnvelope(res, 404, "endpoint does not exists"));
  // Body parser failures and anything else thrown before a handler answered.
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") return sendEnvelope(res, 413, `request body is larger than ${JSON_BODY_LIMIT.toUpperCase()}`);
    if (type === "entity.parse.failed") return sendEnvelope(res, 400, "malformed JSON in request body");
    if (type === "encoding.unsupported" || type === "charset.unsupported") return sendEnvelope(res, 415, "unsupported request body encoding");
    if (type === "request.aborted") return;
    const status = (err as { status?: number }).status;
    if (typeof status === "number" && status >= 400 && status < 500) return sendEnvelope(res, status, "bad request");
    res.locals.error = err;
    const a = errorAnswer(err);
    sendEnvelope(res, a.httpStatus, a.message, a.data);
  });
  return router;
}
