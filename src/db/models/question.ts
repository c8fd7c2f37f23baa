// The questions collection (an account's booking-form questions) and event_questions (one document per question on an event).
import mongoose, { Schema, type InferSchemaType } from "mongoose";

const questionSchema = new Schema(
  {
    user_id: { type: Schema.Types.ObjectId, required: true },
    title: { type: String, required: true },
    question_type: { type: String, required: true },
    /** Type-specific settings, e.g. { options: [...] } for radio_button, check_box, drop_down. */
    question_details: { type: Schema.Types.Mixed, default: {} },
    state: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: "questions", versionKey: false, minimize: false },
);

// (user_id, created_at desc): GET /questions newest first, and ownership checks by (_id, user_id).
questionSchema.index({ user_id: 1, created_at: -1 });

const eventQuestionSchema = new Schema(
  {
    event_id: { type: Schema.Types.ObjectId, required: true },
    question_id: { type: Schema.Types.ObjectId, required: true },
    /** Denormalised owner, so events_count is one indexed count per question. */
    user_id: { type: Schema.Types.ObjectId, required: true },
    /**
     * The question's account when it is not the event's: a team event's form (kept under the team's id, as the
     * event) holds the questions of the owner or admin who put them on it (teams.md). Absent: `user_id`.
     */
    question_owner_id: { type: Schema.Types.ObjectId, default: undefined },
    required: { type: Boolean, required: true },
    order_number: { type: Number, required: true },
    conditions: { type: [Schema.Types.Mixed], default: [] },
    created_at: { type: Date, required: true },
  },
  { collection: "event_questions", versionKey: false },
);

// (user_id, event_id, order_number): an event's form in order; (user_id, question_id, event_id) unique so one question
// is on an event at most once, and events_count. Both led by the shard key, so each query stays on the account's
// shard (docs/operations.md).
eventQuestionSchema.index({ user_id: 1, event_id: 1, order_number: 1 });
eventQuestionSchema.index({ user_id: 1, question_id: 1, event_id: 1 }, { unique: true });

export type QuestionDoc = InferSchemaType<typeof questionSchema> & { _id: mongoose.Types.ObjectId };
export type EventQuestionDoc = InferSchemaType<typeof eventQuestionSchema> & { _id: mongoose.Types.ObjectId };
export const QuestionModel = mongoose.model("Question", questionSchema);
export const EventQuestionModel = mongoose.model("EventQuestion", eventQuestionSchema);
