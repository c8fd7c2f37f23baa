// The teams collection (teams.md): a team with its memberships embedded, and team_keys, the claims that keep a team url unique among teams.
import mongoose, { Schema } from "mongoose";

const TEAM_ROLES = ["owner", "admin", "member"] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

export interface MembershipDoc {
  /** The membership's id: the invitation an account accepts, and the member a DELETE removes. */
  _id: mongoose.Types.ObjectId;
  user_id: mongoose.Types.ObjectId;
  role: TeamRole;
  accepted: boolean;
  invited_at: Date;
}

export interface TeamDoc {
  _id: mongoose.Types.ObjectId;
  name: string;
  url: string;
  /** What the url reads as (src/domain/urlKey.ts), each claimed in team_keys. */
  url_key: string;
  url_shape: string;
  /** Absent on a team made before rule 4 of src/domain/urlKey.ts (it claims its looks when its url changes). */
  url_looks?: string[];
  /** Service time-zone name. */
  timezone: string;
  /**
   * The memberships, whole: a team has few, and they change together with the checks that guard them (the last
   * owner, the role of the caller). Written as one `$set` conditional on `version`, since the embedded server
   * has no positional array updates.
   */
  members: MembershipDoc[];
  version: number;
  created_at: Date;
  updated_at: Date;
}

const membershipSchema = new Schema<MembershipDoc>(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    role: { type: String, required: true },
    accepted: { type: Boolean, required: true },
    invited_at: { type: Date, required: true },
  },
  { _id: false },
);

const teamSchema = new Schema<TeamDoc>(
  {
    name: { type: String, required: true },
    url: { type: String, required: true },
    url_key: { type: String, required: true },
    url_shape: { type: String, required: true },
    url_looks: { type: [String], default: undefined },
    timezone: { type: String, required: true },
    members: { type: [membershipSchema], default: [] },
    version: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: "teams", versionKey: false },
);

// Indexes and the queries they serve:
//   _id: a team by its id (its members checked on the document), a public team page through its url's claim
//   members.user_id: the teams an account belongs to (GET /teams), a host's team events
//   members._id: the team of an invitation (accept, decline)
teamSchema.index({ "members.user_id": 1 });
teamSchema.index({ "members._id": 1 });

export const TeamModel = mongoose.model<TeamDoc>("Team", teamSchema);

/** A claim of what a team url reads as: `_id` `url:<url_key>`, `shape:<url_shape>` or `look:<one of url_looks>`, naming the team. */
export interface TeamKeyDoc {
  _id: string;
  team_id: mongoose.Types.ObjectId;
  at: Date;
}

const teamKeySchema = new Schema<TeamKeyDoc>(
  {
    _id: { type: String, required: true },
    team_id: { type: Schema.Types.ObjectId, required: true },
    at: { type: Date, required: true },
  },
  { collection: "team_keys", versionKey: false },
);

export const TeamKeyModel = mongoose.model<TeamKeyDoc>("TeamKey", teamKeySchema);
