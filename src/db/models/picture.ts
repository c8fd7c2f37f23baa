// The pictures collection: profile pictures as re-encoded at upload (never the bytes as sent) and their square copies.
import mongoose, { Schema } from "mongoose";

const pictureSchema = new Schema(
  {
    /** Random public id used in profile_picture_url; a new upload gets a new id, so caches never serve a stale image. */
    public_id: { type: String, required: true },
    user_id: { type: Schema.Types.ObjectId, required: true },
    content_type: { type: String, required: true },
    data: { type: Buffer, required: true },
    created_at: { type: Date, required: true },
    /** The square copies pages show (src/features/accounts/picture.ts), made with the picture. */
    variants: {
      type: [new Schema({ width: { type: Number, required: true }, content_type: { type: String, required: true }, data: { type: Buffer, required: true } }, { _id: false })],
      default: undefined,
    },
    /**
     * True for a picture re-encoded at upload (metadata gone, dimensions checked). Pictures stored by earlier
     * versions kept the bytes as sent: they are re-encoded on their first request, or removed.
     */
    prepared: { type: Boolean, default: undefined },
  },
  { collection: "pictures", versionKey: false },
);

// public_id: serving GET /pictures/<id> and deleting a replaced picture; user_id: finding every picture of an account.
pictureSchema.index({ public_id: 1 }, { unique: true });
pictureSchema.index({ user_id: 1 });

export const PictureModel = mongoose.model("Picture", pictureSchema);
