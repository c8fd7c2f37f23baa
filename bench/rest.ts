// The benchmarks' REST client: one JSON call to a running service, and the check of its status.
export type Json = Record<string, unknown>;

export async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

/** The envelope's data when the status is the one expected; else the run stops with what came back. */
export function expectStatus(what: string, got: { status: number; json: Json }, status: number): Json {
  if (got.status !== status) throw new Error(`${what}: ${got.status} ${JSON.stringify(got.json).slice(0, 300)}`);
  return got.json.data as Json;
}
