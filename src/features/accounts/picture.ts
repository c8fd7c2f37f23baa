// GET /pictures/<id>: a profile picture's bytes, at an address that changes with every upload so it can be cached for good.
import type { Request, Response } from "express";
import { PictureModel } from "../../db/models/picture.js";

export async function servePicture(req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  const pic = /^[0-9a-f]{32}$/.test(id) ? await PictureModel.findOne({ public_id: id }).lean() : null;
  if (!pic) {
    res.status(404).type("text/plain").send("not found");
    return;
  }
  res.setHeader("Content-Type", pic.content_type);
  res.setHeader("X-Content-Type-Options", "nosniff");
  // A new upload gets a new address, so a picture at one address never changes.
  res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
  res.send(Buffer.from(pic.data.buffer));
}
