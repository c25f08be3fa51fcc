// Text helpers shared by the screens: URL parts, names, counts, distances, dates and times, and the
// profile vocabularies (genders, age groups). Plain functions of their arguments: no DOM, no API,
// no imports, so any module can use them.

export const enc = encodeURIComponent;

/** "1 like" / "3 likes". */
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "1.2 km" / "350 m". */
export const distance = (meters) => meters == null ? "" : meters >= 1000 ? `${(meters / 1000).toFixed(1)} km` : `${Math.round(meters)} m`;

/** A person's shown name: display name, else username, else `fallback`. */
export const shownName = (user, fallback) => user?.displayName || user?.username || fallback;

/** The genders a profile can state: [value, one person, people] ("female", "Woman", "Women"). */
export const GENDERS = [["female", "Woman", "Women"], ["male", "Man", "Men"], ["nonbinary", "Non-binary", "Non-binary people"], ["other", "Other", "Other"]];
/** The event kinds of the ticketed apps (Tickets Tonight, Pala): sports sessions are Playmate's. */
export const TICKETED = ["show", "party"];
export const TICKETED_QUERY = TICKETED.map((kind) => `kind=${kind}`).join("&");

export const AGE_GROUPS = ["under18", "18-24", "25-34", "35-44", "45-54", "55+"];

// time

/** Short and past only: "just now", "5 min ago", "3 h ago", "2 d ago". */
export function ago(date) {
  const minutes = Math.max(0, Math.round((Date.now() - new Date(date)) / 60000));
  if (minutes < 60) return minutes < 1 ? "just now" : `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 24 ? `${hours} h ago` : `${Math.round(hours / 24)} d ago`;
}

/** In the browser's language, past or future: "5 minutes ago", "yesterday", "in 2 hours". */
export function fromNow(iso) {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, "minute");
}

/** This device's time zone ("Europe/Berlin"). */
export const deviceZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** The city of a time zone: "Europe/Berlin" → "Berlin", "America/New_York" → "New York". */
const zoneCity = (zone) => (zone || "").split("/").pop().replace(/_/g, " ");

/** "YYYY-MM-DD" of `date` on this device's calendar. */
export const isoDate = (date) =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`;

/** "YYYY-MM-DD" of today (+ `days`) on this device's calendar. */
export function isoDay(days = 0) {
  const date = new Date();
  date.setDate(date.getDate() + days);
  return isoDate(date);
}

const DAY = { short: { weekday: "short", day: "numeric", month: "short" }, long: { weekday: "long", day: "numeric", month: "long", year: "numeric" } };
/** A YYYY-MM-DD date in words in `locale` (undefined: the browser's), the same on every clock. */
const calendarDay = (iso, locale, style = "short") =>
  new Date(`${iso}T12:00:00Z`).toLocaleDateString(locale, { timeZone: "UTC", ...DAY[style] });

/** "Tue 24 Nov" for a YYYY-MM-DD date. */
export const dayName = (iso) => calendarDay(iso, "en-GB");

/** The same in the browser's language; `style` "long" adds the full names and the year. */
export const localDay = (iso, style) => calendarDay(iso, undefined, style);

/** An event's local date and, when set, time: "2020-11-24 18:00" (`day` formats the date). */
export const localStart = (event, day = (iso) => iso) => `${day(event.localDate)}${event.localTime ? " " + event.localTime : ""}`;

/** An event's start, short, on the venue's clock: "Thu, 26 Nov · 20:30" (naming the venue's city when its zone is not ours). */
export function eventWhen(event) {
  const time = event.localTime || "time TBA";
  const other = event.timeZone && event.timeZone !== deviceZone() ? ` ${zoneCity(event.timeZone)} time` : "";
  return `${localDay(event.localDate)} · ${time}${event.localTime ? other : ""}`;
}

/** A sport session's start on the venue's clock: "Tue 24 Nov 18:00 (Berlin time)". */
export function sessionWhen(event) {
  const zone = zoneCity(event.timeZone);
  return `${localStart(event, dayName)}${zone ? ` (${zone} time)` : ""}`;
}
