// QuestionService: the account's booking-form questions, and the question message events embed too.
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import mongoose from "mongoose";
import { QuestionService, type QuestionSchema } from "../../../gen/scheduling/v1/question_pb.js";
import { EventModel } from "../../db/models/event.js";
import { EventQuestionModel, QuestionModel, type QuestionDoc } from "../../db/models/question.js";
import type { UserDoc } from "../../db/models/user.js";
import { missingParams, notFound, requireObject } from "../../domain/errors.js";
import { checkNewQuestion, checkQuestionUpdate, type QuestionDetails } from "../../domain/questions.js";
import { formatLongDate } from "../../domain/format.js";
import { ianaForServiceZone } from "../../domain/timezones.js";
import { objectIdOf } from "../../db/ids.js";
import type { Access } from "../accounts/index.js";

/**
 * How many undeleted events use each question. Links of deleted events are kept (a deleted event keeps its
 * form), so they are counted out here rather than removed: two indexed reads, no $lookup.
 */
export async function eventsCounts(userId: mongoose.Types.ObjectId, questionIds: readonly mongoose.Types.ObjectId[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>(questionIds.map((id) => [id.toHexString(), 0]));
  if (questionIds.length === 0) return counts;
  // (user_id, question_id, event_id) index: the account's questions' links, on its shard.
  const links = await EventQuestionModel.find({ user_id: userId, question_id: mongoose.trusted({ $in: questionIds }) }, { question_id: 1, event_id: 1, _id: 0 }).lean();
  const eventIds = [...new Set(links.map((l) => l.event_id.toHexString()))].map((id) => new mongoose.Types.ObjectId(id));
  // _id index.
  const live = eventIds.length === 0 ? [] : await EventModel.find({ _id: mongoose.trusted({ $in: eventIds }), deleted: false }, { _id: 1 }).lean();
  const liveIds = new Set(live.map((e) => e._id.toHexString()));
  for (const l of links) {
    if (!liveIds.has(l.event_id.toHexString())) continue;
    const key = l.question_id.toHexString();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export type QuestionMessage = MessageInitShape<typeof QuestionSchema>;

export function presentQuestion(q: QuestionDoc, eventsCount: number, host: UserDoc): QuestionMessage {
  return {
    id: q._id.toHexString(),
    title: q.title,
    questionType: q.question_type,
    state: q.state,
    questionDetails: (q.question_details ?? {}) as JsonObject,
    eventsCount,
    createdAt: formatLongDate(q.created_at, ianaForServiceZone(host.timezone)),
  };
}

async function presentQuestions(questions: QuestionDoc[], host: UserDoc): Promise<QuestionMessage[]> {
  const counts = await eventsCounts(host._id, questions.map((q) => q._id));
  return questions.map((q) => presentQuestion(q, counts.get(q._id.toHexString()) ?? 0, host));
}

async function ownQuestion(host: UserDoc, id: string): Promise<QuestionDoc> {
  const _id = objectIdOf(id);
  // _id index; the owner test makes another account's question as unknown as a missing one.
  const q = _id === null ? null : await QuestionModel.findOne({ _id, user_id: host._id }).lean<QuestionDoc>();
  if (!q) throw notFound("question not found");
  return q;
}

export function createQuestionService(access: Access): ServiceImpl<typeof QuestionService> {
  return {
    async listQuestions(_req, ctx) {
      const host = await access.authenticate(ctx);
      // (user_id, created_at desc) index.
      const questions = await QuestionModel.find({ user_id: host._id }).sort({ created_at: -1, _id: -1 }).lean<QuestionDoc[]>();
      return { questions: await presentQuestions(questions, host) };
    },

    async createQuestion(req, ctx) {
      const host = await access.authenticate(ctx);
      const input = req.question;
      const title = input?.title;
      const questionType = input?.questionType;
      // An empty title is a 422 (docs/spec/extensions.md), only an absent one is a missing param.
      const missing = [title === undefined ? "title" : null, questionType === undefined ? "question_type" : null].filter((f): f is string => f !== null);
      if (input === undefined || title === undefined || questionType === undefined) throw missingParams({ question: missing });
      const fields = checkNewQuestion({ ...input, title, questionType, questionDetails: input.questionDetails as QuestionDetails | undefined });
      const [created] = await QuestionModel.create([{ ...fields, user_id: host._id, created_at: access.clock.now() }]);
      return { question: presentQuestion(created.toObject() as QuestionDoc, 0, host) };
    },

    async updateQuestion(req, ctx) {
      const host = await access.authenticate(ctx);
      requireObject("question", req.question);
      const current = await ownQuestion(host, req.id);
      const patch = checkQuestionUpdate(
        { question_type: current.question_type, question_details: (current.question_details ?? {}) as QuestionDetails },
        { ...req.question, questionDetails: req.question.questionDetails as QuestionDetails | undefined },
      );
      if (Object.keys(patch).length > 0) {
        const res = await QuestionModel.updateOne({ _id: current._id, user_id: host._id }, { $set: patch });
        if (res.matchedCount === 0) throw notFound("question not found");
      }
      const [question] = await presentQuestions([await ownQuestion(host, req.id)], host);
      return { question };
    },
  };
}
