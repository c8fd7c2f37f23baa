// The host's page (GET /<user>): who they are and the events a visitor may book.
import { PublicBookingService } from "../../../../gen/scheduling/v1/public_booking_pb.js";
import { localeOf } from "../../../i18n/index.js";
import type { Request, Response } from "express";
import { documentHtml, profileBody, speechOf, type ProfileView } from "../pages.js";
import { inLanguage, isEmbed, isPageSegment, keptQuery, pageLocale, samePath } from "../request.js";
import { sendPage, type PageHandler } from "../respond.js";
import { locationText, say } from "../shared/view.js";

export const profilePage: PageHandler = async (req, res, { call }) => {
  const user = String(req.params.user);
  if (!isPageSegment(user, true)) return "next";
  const embed = isEmbed(req);
  const { profile } = await call(PublicBookingService.method.getPublicProfile, { userUrl: user });
  if (!profile) throw new Error("GetPublicProfile answered without a profile");
  const speech = speechOf(pageLocale(req, localeOf(profile.locale)), profile.timeFormat);
  const suffix = keptQuery(req);
  const host = {
    name: profile.fullName,
    avatarName: profile.avatarName,
    picture: samePath(profile.pictureUrl),
    href: `/${encodeURIComponent(profile.url)}${suffix}`,
    brandColor: profile.brandColor,
    logo: samePath(profile.brandLogoUrl),
  };
  await sendListing(req, res, {
    speech,
    embed,
    host,
    bio: profile.bio,
    events: profile.events.map((e) => ({
      name: e.name,
      href: `/${encodeURIComponent(profile.url)}/${encodeURIComponent(e.url)}${suffix}`,
      duration: e.slotDuration,
      description: e.description,
      location: locationText(e.locationKind, undefined, profile.fullName, speech),
      color: e.color,
    })),
  });
};

/** A page that lists who is booked and their events: a host's profile, a team's page (handlers/team.ts). */
export async function sendListing(req: Request, res: Response, view: ProfileView): Promise<void> {
  const { speech, embed, host } = view;
  const title = say(speech, "profileHeading", { host: host.name });
  const description = say(speech, "descriptionProfile", { host: host.name });
  await sendPage(res, 200, (a) => documentHtml({ speech, title, description, assets: a.names, embed, host: { ...host, href: undefined }, body: profileBody(view), languages: inLanguage(req) }), {
    embed,
    private: false,
    locale: speech.locale,
  });
}
