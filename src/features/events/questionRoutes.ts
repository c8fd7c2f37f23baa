// REST rows of booking-form questions (extensions.md Questions) onto QuestionService.
import { QuestionService } from "../../../gen/scheduling/v1/question_pb.js";
import { fromPath, responseField as field, type RestRoute } from "../../platform/rest/table.js";


export const questionRoutes: RestRoute[] = [
  { kind: "rpc", method: "GET", path: "/questions", service: QuestionService, rpc: "listQuestions", body: "none", data: field("questions"), message: "questions found", summary: "List questions" },
  { kind: "rpc", method: "POST", path: "/questions", service: QuestionService, rpc: "createQuestion", status: 201, required: ["title", "question_type"], data: field("question"), message: "question created", summary: "Create a question" },
  {
    kind: "rpc", method: "PATCH", path: "/questions/:id", service: QuestionService, rpc: "updateQuestion",
    request: fromPath({ id: "id" }, "question"),
    data: field("question"), message: "question updated", summary: "Update a question",
  },
];
