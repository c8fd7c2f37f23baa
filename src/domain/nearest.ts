// What a person most likely meant by a name or value that is not one of those taken: the same in another case, or one edit away (unknown fields, allowed values).

/** At most one insertion, deletion, substitution or swap of neighbours apart. */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const restA = a.slice(i);
  const restB = b.slice(i);
  if (restA.slice(1) === restB.slice(1)) return true; // substitution
  if (restA.slice(1) === restB || restA === restB.slice(1)) return true; // deletion or insertion
  return restA.length >= 2 && restA[0] === restB[1] && restA[1] === restB[0] && restA.slice(2) === restB.slice(2); // swap
}

const digitsOf = (s: string): string => s.replace(/\D+/g, "");

/**
 * The allowed value `value` most likely stands for (extensions.md "Allowed values"): the one it is in another case
 * (`USD` for `usd`, `berlin` for `Berlin`), else the first one edit away, case aside (`30_minute`, `lavendar`,
 * `Europe/Berln`; of several, a longer one), an edit that leaves the digits alone (`20_minutes` is not a typo of `0_minutes`) in a value of 3 characters or more. None for a
 * number (7 is one edit from 0 to 6, which says nothing) or a value that is not text.
 */
export function closestAllowed<T extends string | number>(value: unknown, allowed: readonly T[]): T | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  const lower = value.toLowerCase();
  const texts = allowed.filter((a): a is T & string => typeof a === "string");
  // Two letters with one changed is half the word (`pt` is not a slip of `it`): only longer values are read as slips.
  const near = value.length < 3 ? [] : texts.filter((a) => oneEditApart(lower, a.toLowerCase()) && digitsOf(a) === digitsOf(value));
  // Of several, one the value lacks a letter of (the commonest slip: `Berln` is `Berlin` rather than `Bern`).
  return texts.find((a) => a.toLowerCase() === lower) ?? near.find((a) => a.length > value.length) ?? near[0] ?? languageOf(lower, texts);
}

/** A language tag with its region or script (`de-DE`, `pt_BR`, `zh-Hans`, `es-419`): its language part. */
const TAGGED_LANGUAGE = /^([a-z]{2,3})[-_](?:[a-z]{2}|[a-z]{4}|\d{3})(?:[-_][a-z\d]+)*$/;

/** The allowed language a tag such as `de-DE` names (`de`), where the list holds it. */
function languageOf(lower: string, texts: readonly string[]): string | undefined {
  const language = TAGGED_LANGUAGE.exec(lower)?.[1];
  return language === undefined ? undefined : texts.find((a) => a.toLowerCase() === language);
}
