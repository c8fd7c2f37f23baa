// The first path segments of the one port that the service answers itself, which no user url may take: a module of its own so the pages' browser script can build links without the url rules.
/**
 * The first path segments the service answers itself at the root of its one port: REST and its OpenAPI under
 * `api`, the page assets, the booker's pages, Swagger UI, health, metrics, profile pictures, the team pages (teams.md). The booking pages
 * (src/features/pages) take every other single segment as a user url, so a user url equal to one of these (in any case)
 * would be hidden by the service's own path. gRPC and Connect paths (`/scheduling.v1.X/Y`, `/grpc.health.v1...`)
 * hold dots, which no url may. src/platform/http/app.ts and src/features/pages/router.ts mount their paths from this list.
 */
export const ROOT_PATHS = {
  api: "api",
  assets: "assets",
  booking: "booking",
  docs: "docs",
  healthz: "healthz",
  metrics: "metrics",
  oauth: "oauth",
  pictures: "pictures",
  team: "team",
} as const;

/**
 * The first segment of a single-use link's page (booking-kinds.md): /d/<token>. Not among ROOT_PATHS: a user url
 * has two characters at least, so none can be this one.
 */
export const LINK_ROOT = "d";
