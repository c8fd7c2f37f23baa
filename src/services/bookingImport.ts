// AdminService.ImportBookings: all-or-nothing import of existing bookings (built with the bookings issue).
import { Code, ConnectError } from "@connectrpc/connect";
import type { ImportBookingsRequest } from "../../gen/scheduling/v1/admin_pb.js";

export async function importBookings(_req: ImportBookingsRequest): Promise<{ imported: number; ids: string[] }> {
  throw new ConnectError("booking import is not available yet", Code.Unimplemented);
}
