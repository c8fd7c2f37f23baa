// What the app wires of teams: TeamService and its REST rows.
export { createTeamService } from "./service.js";
export { publicTeamRoutes, teamRoutes } from "./routes.js";
