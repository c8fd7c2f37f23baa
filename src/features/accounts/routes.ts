// REST rows of the user and account surface (docs/spec/scheduling-api.md Users, docs/spec/extensions.md Availability and Admin).
import { UserService } from "../../../gen/scheduling/v1/user_pb.js";
import { AdminService } from "../../../gen/scheduling/v1/admin_pb.js";
import { responseField as field, type RestRoute } from "../../platform/rest/table.js";


export const userRoutes: RestRoute[] = [
  { kind: "rpc", method: "GET", path: "/user", service: UserService, rpc: "getUser", body: "none", secret: true, data: field("user"), message: "user details", summary: "Current user" },
  { kind: "rpc", method: "GET", path: "/user/settings", service: UserService, rpc: "getUserSettings", body: "none", secret: true, data: field("settings"), message: "user settings", summary: "User object plus settings fields" },
  { kind: "rpc", method: "PATCH", path: "/user", service: UserService, rpc: "updateUser", secret: true, data: field("user"), message: "user updated", summary: "Update current user", shownBy: ["/user/settings"] },
  {
    kind: "rpc", method: "POST", path: "/users/validate_url_availability", service: UserService, rpc: "checkUserUrlAvailability", required: ["url"],
    message: "url is available to use", summary: "Check a booking page URL",
  },
  {
    kind: "rpc", method: "PUT", path: "/users/profile_picture", service: UserService, rpc: "uploadProfilePicture", body: "multipart", file: "profile_picture", secret: true,
    data: field("user"), message: "profile picture updated", summary: "Upload profile picture",
  },
  { kind: "rpc", method: "DELETE", path: "/users/remove_profile_picture", service: UserService, rpc: "removeProfilePicture", body: "none", message: "profile picture removed", summary: "Remove profile picture" },
  {
    kind: "rpc", method: "PUT", path: "/users/brand_logo", service: UserService, rpc: "uploadBrandLogo", body: "multipart", file: "brand_logo", secret: true,
    data: field("user"), message: "brand logo updated", summary: "Upload the brand logo shown on the booking pages",
  },
  {
    kind: "rpc", method: "DELETE", path: "/users/brand_logo", service: UserService, rpc: "removeBrandLogo", body: "none", secret: true,
    data: field("user"), message: "brand logo removed", summary: "Remove the brand logo",
  },
  { kind: "rpc", method: "PUT", path: "/users/regenerate_api_key", service: UserService, rpc: "regenerateApiKey", body: "none", secret: true, message: "api_key is updated", summary: "Regenerate API key" },
  { kind: "rpc", method: "GET", path: "/user/availability", service: UserService, rpc: "getAvailability", body: "none", data: field("availability"), message: "availability", summary: "Availability of the current user" },
  { kind: "rpc", method: "PUT", path: "/user/availability", service: UserService, rpc: "updateAvailability", data: field("availability"), message: "availability", summary: "Replace the availability" },
  {
    kind: "rpc", method: "POST", path: "/admin/accounts", service: AdminService, rpc: "createAccount", status: 201, secret: true, required: ["email", "full_name"],
    data: field("user"), message: "account created", summary: "Create an account (X-ADMIN-TOKEN)", shownBy: ["/user", "/user/settings"],
  },
];

const TWO_FACTOR = "Sign in to the app to manage two factor authentication.";
const PASSWORD = "Sign in to the app to change your password or delete your account.";
const HELLOBAR = "A signed in session is required";

export const sessionOnlyRoutes: RestRoute[] = [
  { kind: "session_only", method: "ALL", path: "/two_factor", message: TWO_FACTOR, summary: "Two factor authentication (session only)" },
  { kind: "session_only", method: "ALL", path: "/two_factor/*rest", message: TWO_FACTOR, summary: "Two factor authentication actions (session only)" },
  { kind: "session_only", method: "PUT", path: "/users/change_password", message: PASSWORD, summary: "Change password (session only)" },
  { kind: "session_only", method: "PUT", path: "/user/destroy_me", message: PASSWORD, summary: "Delete account (session only)" },
  { kind: "session_only", method: "ALL", path: "/hellobar", message: HELLOBAR, summary: "Hellobar (session only)" },
  { kind: "session_only", method: "ALL", path: "/hellobar/*rest", message: HELLOBAR, summary: "Hellobar actions (session only)" },
];
