// The pictures collection: profile picture bytes (at most 5 MB, so one document holds them).
import mongoose, { Schema } from "mongoose";

const pictureSchema = new Schema(
  {
    /** Random public id used in profile_picture_url; a new upload gets a new id, so caches never serve a stale image. */
    public_id: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    content_type: { type: String, required: true },
    data: { type: Buffer, required: true },
    created_at: { type: Date, required: true },
    /**
     * The resized copies pages show (src/features/accounts/picture.ts), made on the first request for one and kept.
     * Absent until then; empty when the original could not be read for resizing (the original is served instead).
     */
    variants: {
      type: [new Schema({ width: { type: Number, required: true }, content_type: { type: String, required: true }, data: { type: Buffer, required: true } }, { _id: false })],
      default: undefined,
    },
  },
  { collection: "pictures", versionKey: false },
);

// public_id: serving GET /pictures/<id> and deleting a replaced picture; user_id: finding every picture of an account.
pictureSchema.index({ public_id: 1 }, { unique: true });
pictureSchema.index({ user_id: 1 });

export const PictureModel = mongoose.model("Picture", pictureSchema);
