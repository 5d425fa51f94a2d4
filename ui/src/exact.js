// Numbers exactly as written. JSON.parse reads 9007199254740993 as 9007199254740992, so an
// integer past 2^53 read from the page's JSON (the arguments of a call being edited) is kept
// as a marked string holding its digits, and the marker is turned back into the digits in
// the JSON text the page sends: the server gets the number the person saw and edited.
// The marker carries a nonce made when the page loads, so no text from a model can forge one.

const MARK = "\u2063";
const NONCE = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
const PREFIX = `${MARK}${NONCE}:`;
const MARKED = new RegExp(`"${PREFIX}(-?\\d+)${MARK}"`, "g");
const INTEGER = /^-?\d+$/;

/** The marked form of an integer written as `digits`. */
export function exactNumber(digits) {
  return `${PREFIX}${digits}${MARK}`;
}

/** Whether `value` is a marked integer. */
export function isExact(value) {
  return typeof value === "string" && value.startsWith(PREFIX) && value.endsWith(MARK);
}

/** The digits of a marked integer. */
export function exactDigits(value) {
  return value.slice(PREFIX.length, -MARK.length);
}

/** A number typed as `text`: marked when it is an integer a JS number cannot hold exactly. */
export function typedNumber(text) {
  return INTEGER.test(text) && !Number.isSafeInteger(Number(text)) ? exactNumber(text) : Number(text);
}

/** JSON.parse keeping every integer past 2^53 exactly (marked). */
export function parseExact(text) {
  return JSON.parse(text, (key, value, context) =>
    typeof value === "number" && context && typeof context.source === "string" && INTEGER.test(context.source) && !Number.isSafeInteger(value)
      ? exactNumber(context.source)
      : value,
  );
}

/** JSON text with every marked integer written as its digits. */
export function restoreExact(json) {
  return json.replace(MARKED, "$1");
}

/** JSON.stringify writing marked integers as their digits. */
export function stringifyExact(value, indent) {
  return restoreExact(JSON.stringify(value, null, indent));
}

/** `value` with marked integers as (rounded) numbers: for checks against a schema only. */
export function approximate(value) {
  if (isExact(value)) return Number(exactDigits(value));
  if (Array.isArray(value)) return value.map(approximate);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, approximate(v)]));
  return value;
}
