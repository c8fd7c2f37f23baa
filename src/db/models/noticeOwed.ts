// The fields a calendar connection, a calendar or a meeting account carries for the host's notices (features/notices/record.ts): a recorded change's notices owed until planned, and who claimed each day's e-mail.

/**
 * A change of status or warnings writes these in the same write as the change itself, so that its notices are owed
 * even when the replica dies (or the database stops answering) before planning them; planning clears them, and a
 * sweep of every replica plans what stayed owed for a while.
 */
export const noticeOwedFields = {
  /** The owed change's id (its messages' ids come from it); null when nothing is owed. */
  notice_seq: { type: String, default: null },
  /** What the change turned into: error, invalid, warnings, or null (fine again). */
  notice_trouble: { type: String, default: null },
  /** When the change was recorded: the sweep plans what is still owed a while after it. */
  notice_owed_at: { type: Date, default: null },
};

/**
 * On what notices are about (a connection, a meeting account), beside `notified_at`: the change (its `notice_seq`)
 * that claimed each kind's e-mail of the day, so planning that change again finds its claim instead of losing the
 * e-mail.
 */
export const noticeClaimFields = {
  notified_by: {
    error: { type: String, default: null },
    invalid: { type: String, default: null },
    warnings: { type: String, default: null },
  },
};

/** The partial index of the sweep (only documents that owe notices are in it). */
export const noticeOwedIndex = [{ notice_owed_at: 1 }, { partialFilterExpression: { notice_owed_at: { $type: "date" } } }] as const;
