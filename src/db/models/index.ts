// Every model of the service, so start-up can build all indexes before serving.
import { UserModel } from "./user.js";
import { PictureModel } from "./picture.js";

export const allModels: ReadonlyArray<{ createIndexes(): Promise<unknown> }> = [UserModel, PictureModel];
