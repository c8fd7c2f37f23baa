// The integrations collection: a host's connected video-meeting provider (Jitsi), one per account and kind.
import mongoose, { Schema, type InferSchemaType } from "mongoose";

const integrationSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    /** conference */
    name: { type: String, required: true },
    /** jitsi */
    provider: { type: String, required: true },
    base_url: { type: String, required: true },
    connected_at: { type: Date, required: true },
  },
  { collection: "integrations", versionKey: false },
);

// (user_id, name) unique: GET /integrations (user_id prefix), connect as an upsert and disconnect by name, and the
// check that the conference location may be used; unique so an account has one integration of each kind.
integrationSchema.index({ user_id: 1, name: 1 }, { unique: true });

export type IntegrationDoc = InferSchemaType<typeof integrationSchema> & { _id: mongoose.Types.ObjectId };
export const IntegrationModel = mongoose.model("Integration", integrationSchema);
