// Text helpers shared by the screens: URL parts, names, counts, distances, the API's enums in words,
// dates and times on the venue's clock, and problems in words. Plain functions of their arguments:
// no DOM, no API, no imports, so any module can use them.

export const enc = encodeURIComponent;

/** "1 like" / "3 likes". */
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "1.2 km" / "350 m". */
export const distance = (meters) => meters == null ? "" : meters >= 1000 ? `${(meters / 1000).toFixed(1)} km` : `${Math.round(meters)} m`;

/** The compass direction of a point `east` and `north` metres away: "north-east"; "" when it is right here. */
export function direction(east, north) {
  if (Math.hypot(east, north) < 50) return "";
  const names = ["north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west"];
  return names[Math.round(((Math.atan2(east, north) * 180) / Math.PI + 360) / 45) % 8];
}

/** A person's shown name: display name, else username, else `fallback`. */
export const shownName = (user, fallback) => user?.displayName || user?.username || fallback;

/** A city's name from its key ("Berlin$State of Berlin$DE" → "Berlin") or a plain name. */
export const cityName = (key) => key?.split("$")[0] || "";

/** The event kinds of the ticketed apps (Tickets Tonight, Pala): sports sessions are Playmate's. */
export const TICKETED = ["show", "party"];
export const TICKETED_QUERY = TICKETED.map((kind) => `kind=${kind}`).join("&");

// The API's enums in words: one table per enum ([value, label…] rows or { value: label }), read with label().

/** Genders: [value, one person, people] ("female", "Woman", "Women"). */
export const GENDERS = [["female", "Woman", "Women"], ["male", "Man", "Men"], ["nonbinary", "Non-binary", "Non-binary people"], ["other", "Other", "Other"]];
/** Age groups, in order. */
export const AGE_GROUPS = { under18: "Under 18", "18-24": "18–24", "25-34": "25–34", "35-44": "35–44", "45-54": "45–54", "55+": "55+" };
/** Skill levels of a session. */
export const SKILLS = [["any", "All levels"], ["beginner", "Beginner"], ["intermediate", "Intermediate"], ["advanced", "Advanced"]];
/** Times of day of the session search. */
export const TIMES = [["morning", "Morning (5–12)"], ["afternoon", "Afternoon (12–17)"], ["evening", "Evening (17–22)"], ["night", "Night (22–5)"]];
/** Why a suggestion is not for me. */
export const REASONS = [["sport", "Not this sport"], ["time", "Bad time"], ["distance", "Too far"], ["people", "Not these people"]];
export const EVENT_STATUSES = { scheduled: "Scheduled", onsale: "On sale", offsale: "Off sale", cancelled: "Cancelled",
  postponed: "Postponed", rescheduled: "Rescheduled", removed: "No longer sold" };
export const POST_STATUSES = { processing: "Processing", ready: "Ready", failed: "Could not be processed" };
export const INVITATION_STATUSES = { pending: "Waiting for an answer", accepted: "Accepted", declined: "Declined" };
export const DEVICE_PLATFORMS = { apns: "iPhone" };
/** Notification kinds: [value, what settings call them, what one is called in the inbox]. */
export const NOTIFICATION_KINDS = [["friendRequest", "Friend requests", "Friend request"],
  ["friendAccepted", "Accepted friend requests", "New friend"], ["match", "Matches", "Match"], ["message", "Chat messages", "Message"],
  ["invitation", "Event invitations", "Invitation"], ["eventChanged", "Changes to my events", "Event change"],
  ["postComment", "Comments on my clips", "Comment"], ["postVote", "Votes on my clips", "Like"], ["moderation", "Reviews of my clips", "Review"],
  ["sessionReminder", "Sport session reminders", "Reminder"], ["sessionDeleted", "Cancelled sport sessions", "Cancelled session"],
  ["digest", "Tonight's digest", "Tonight's digest"]];

/** An API name in words: "birthDate" → "Birth date", "spot.label" → "Spot label", "feeds[1]" → "Feeds". */
export const words = (name) => String(name ?? "").replace(/\[\d*\]/g, "").replace(/([a-z])([A-Z])/g, "$1 $2")
  .replace(/[._$-]+/g, " ").trim().toLowerCase().replace(/^./, (c) => c.toUpperCase());

/** The label of `value` in `table` (column `column` of a row table), else the value in words. */
export const label = (table, value, column = 1) =>
  (Array.isArray(table) ? table.find((row) => row[0] === value)?.[column] : table[value]) ?? words(value);

// Dates and times: in English, on the clock of the event's venue (`event.timeZone`) or this device.

const EN = "en-GB";

/** This device's time zone ("Europe/Berlin"). */
export const deviceZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The city of a time zone: "Europe/Berlin" → "Berlin", "America/New_York" → "New York". */
export const zoneCity = (zone) => (zone || "").split("/").pop().replace(/_/g, " ");

/** "YYYY-MM-DD" of `date` on this device's calendar. */
export const isoDate = (date) =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`;

/** "YYYY-MM-DD" of today (+ `days`) on this device's calendar. */
export function isoDay(days = 0) {
  const date = new Date();
  date.setDate(date.getDate() + days);
  return isoDate(date);
}

/** "YYYY-MM-DD" of an instant on `zone`'s calendar (this device's when not given). */
const dayIn = (date, zone) => new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(date);

/** A YYYY-MM-DD day in words, seen from today on `zone`'s calendar: "Today", "Tomorrow", "Yesterday",
 * else "Thu 26 Nov" (with the year when not this one); `long`: "Today, Thursday 26 November". */
export function dayName(iso, zone, long = false) {
  const today = dayIn(new Date(), zone);
  const near = { 0: "Today", 1: "Tomorrow", [-1]: "Yesterday" }[Math.round((Date.parse(iso) - Date.parse(today)) / 864e5)];
  const style = long ? "long" : "short";
  const day = new Date(`${iso}T12:00:00Z`).toLocaleDateString(EN, { timeZone: "UTC", weekday: style, day: "numeric", month: style,
    year: iso.slice(0, 4) === today.slice(0, 4) ? undefined : "numeric" });
  return near ? (long ? `${near}, ${day}` : near) : day;
}

/** An instant in words on `zone`'s clock (this device's when not given): "Today · 20:30", "Thu 26 Nov · 09:15". */
export const timeName = (iso, zone) => `${dayName(dayIn(new Date(iso), zone), zone)} · ${
  new Date(iso).toLocaleTimeString(EN, { timeZone: zone, hour: "2-digit", minute: "2-digit" })}`;

/** An event's start on the venue's clock: "Today · 20:30 · in 2 hours", "Thu 26 Nov · 20:30 Berlin time"
 * (naming the venue's city when its zone is not this device's); `long` spells the day out. */
export function eventWhen(event, long = false) {
  const day = dayName(event.localDate, event.timeZone, long);
  if (!event.localTime) return `${day} · time to be announced`;
  const zone = event.timeZone && event.timeZone !== deviceZone() ? ` ${zoneCity(event.timeZone)} time` : "";
  const soon = Math.abs(Date.parse(event.start) - Date.now()) < 3 * 36e5 ? ` · ${fromNow(event.start)}` : "";
  return `${day} · ${event.localTime.slice(0, 5)}${zone}${soon}`;
}

/** A sport session's start: as eventWhen. */
export const sessionWhen = eventWhen;

/** Short and past only: "just now", "5 min ago", "3 h ago", "2 d ago". */
export function ago(date) {
  const minutes = Math.max(0, Math.round((Date.now() - new Date(date)) / 60000));
  if (minutes < 60) return minutes < 1 ? "just now" : `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 24 ? `${hours} h ago` : `${Math.round(hours / 24)} d ago`;
}

/** Past or future: "just now", "5 minutes ago", "yesterday", "in 2 hours". */
export function fromNow(iso) {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  const format = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return "just now";
}

// Problems in words: never a status code, a field's API name or the machinery behind Tonight.

/** What a request that never reached Tonight says. */
export const OFFLINE = "Can't reach Tonight right now. Check your connection and try again.";
const OURS = "Something went wrong on our side. Try again in a moment.";
const BUSY = "Tonight is busy right now. Nothing was changed — try again in a moment.";
const SIGN_IN = "You were signed out. Sign in again.";
const PROBLEMS = { internal_error: OURS, database_busy: BUSY, database_unavailable: BUSY, storage_unavailable: BUSY, media_busy: BUSY,
  too_many_connections: BUSY, in_progress: BUSY, provider_unavailable: BUSY, gazetteer_empty: "Tonight doesn't know any cities yet.",
  anonymous_read_only: "Sign up to do this — it takes ten seconds.", invalid_token: SIGN_IN, invalid_refresh_token: SIGN_IN,
  refresh_token_reused: SIGN_IN, answer_withheld: "You're signed up already: sign in.", media_link: "This link has expired. Reload the page.",
  invalid_characters: "Some text has characters Tonight can't keep. Remove them and try again.",
  invalid_link: "This link has already been used or replaced by a newer one.", link_expired: "This link has expired.",
  already_verified: "Your email address is already confirmed." };
const STATUSES = { 401: "Sign in to do this.", 403: "You can't do that.", 404: "This isn't here any more.",
  409: "This changed meanwhile. Reload and try again.", 413: "That's too large to send.", 429: "Too many tries. Wait a moment and try again." };
/** Words about the machinery, not for people. */
const MACHINERY = /server|database|storage|\bthe request\b|header|json|http|token|idempotency|parameter|cursor|schema|\bnull\b|undefined/i;

/** One field's problem as a sentence, under `name` (the field's label): "Password: at least 10 characters." */
export const fieldSentence = (name, message) => `${name}: ${message.replace(/^[A-Z](?=[a-z ])/, (c) => c.toLowerCase())}`;

/** A problem+json answer in words for people: its field problems, else its own sentence when that
 * is not about the machinery, else one for its kind; status 0 is a request that never arrived. */
export function problemText(problem, status) {
  if (problem.errors?.length) return problem.errors.map((f) => fieldSentence(words(f.field), f.message)).join(" ");
  if (!status) return OFFLINE;
  const detail = problem.detail && !MACHINERY.test(problem.detail) ? problem.detail.replace(/^No such (.+)\.$/, "This $1 isn't here any more.")
    .replace(/^(This event is )(\w+)\.$/, (_, start, status) => `${start}${label(EVENT_STATUSES, status).toLowerCase()}.`) : "";
  return PROBLEMS[problem.code] || detail || STATUSES[status] || (status >= 500 ? OURS : "That didn't work. Try again.");
}
