// The reads of one booking that the effects of other features make (calendar, meeting, e-mail) when their turn comes: the booking, its answers with their questions.
import mongoose from "mongoose";
import { objectIdOf } from "../../db/ids.js";
import { BookingModel, type BookingDoc } from "../../db/models/booking.js";
import { QuestionModel } from "../../db/models/question.js";

/** The booking as stored now; null for an id that is not one, or a booking that is gone. */
export async function bookingById(id: string | undefined): Promise<BookingDoc | null> {
  const _id = objectIdOf(id);
  // _id index.
  return _id === null ? null : BookingModel.findById(_id).lean<BookingDoc>();
}

/** The answers with their questions' titles, in the order they were given; a question deleted since is left out. */
export async function answersWithQuestions(b: Pick<BookingDoc, "answers">): Promise<{ question: string; value: unknown }[]> {
  const ids = b.answers.map((a) => objectIdOf(a.question_id)).filter((id): id is mongoose.Types.ObjectId => id !== null);
  if (ids.length === 0) return [];
  // _id index.
  const questions = await QuestionModel.find({ _id: mongoose.trusted({ $in: ids }) }, { title: 1 }).lean<{ _id: mongoose.Types.ObjectId; title: string }[]>();
  const titles = new Map(questions.map((q) => [q._id.toHexString(), q.title]));
  return b.answers.flatMap((a) => {
    const title = titles.get(a.question_id);
    return title === undefined ? [] : [{ question: title, value: a.value }];
  });
}
