// A service as the server mounts it: its implementation, its check of the caller from the headers, its largest message.
import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";

export interface ServiceEntry {
  service: DescService;
  impl: ServiceImpl<DescService>;
  /**
   * Checks the caller from the headers alone, before the request body is read, for services whose every method
   * refuses an unknown caller (API key, admin token). Public services have none.
   */
  admit?: (ctx: HandlerContext) => Promise<void>;
  /**
   * Largest request message, when smaller than the server's (a 6 MB picture upload). A service anyone may call
   * has no header check, so its bytes are read before any caller is known: it takes no more than REST takes in a
   * JSON body (1 MB; a booking with every answer at its longest is far below), and a client announcing more is
   * refused on the 5-byte prefix instead of being read.
   */
  readMaxBytes?: number;
}

/** A keyless service's largest message: REST's JSON body limit (JSON_BODY_LIMIT of src/platform/rest/router.ts). */
export const KEYLESS_READ_MAX_BYTES = 1024 * 1024;
