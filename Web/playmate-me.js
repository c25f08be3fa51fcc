// Playmate's personal screens: my calendar by day with its iCalendar subscription (#/calendar),
// the preferences quiz (#/quiz), suggested sessions with reasons and "Not for me" (#/recs) and
// player statistics (#/stats, #/stats/<username>).
import { api, session } from "./api.js";
import { h, toast, position, actionButton } from "./ui.js";
import { params, go } from "./router.js";
import { REASONS, sportsList, sessionCard, memberOnly, fieldErrors, checkboxes, select, seats, reasonContext, reasonList, sportPicker } from "./playmate-common.js";
import { enc, isoDay, dayName, deviceZone, zoneCity, GENDERS, AGE_GROUPS } from "./format.js";

const myZone = () => deviceZone() || "UTC";

/** The subscription button: creates (or replaces) the secret feed URL and shows https + webcal links. */
function subscription() {
  const box = h("section", { "aria-label": "Calendar subscription", class: "card" },
    h("p", { class: "muted" }, "Subscribe from your calendar app; asking again makes a new link and stops the old one."));
  box.append(actionButton("Subscription link", async () => {
    const { url } = await api("POST", "/v1/me/calendar/subscription");
    const https = new URL(url, location.origin).href;
    const webcal = https.replace(/^https?:/, "webcal:");
    box.replaceChildren(h("p", {}, "Your private feed (keep it secret):"),
      h("p", {}, h("a", { href: webcal }, "Open in calendar app (webcal)")),
      h("label", {}, "Feed link", h("input", { readonly: true, value: https, onfocus: (e) => e.target.select() })));
  }, { class: "secondary" }));
  return box;
}

function calendarItem(event, zone) {
  const time = new Date(event.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: zone });
  const href = event.kind === "session" ? `#/session/${enc(event.id)}` : `#/event/${enc(event.id)}`;
  return h("li", { class: "card pm-cal-item" }, h("span", { class: "pm-time" }, time), " ",
    h("a", { href }, event.name), h("div", { class: "muted" }, event.place.name, event.session ? ` · ${seats(event)}` : ""));
}

/** #/calendar — what I play or attend, by day in my time zone (default: the next 14 days). */
export async function calendarScreen() {
  const gate = memberOnly("My calendar", "Sign up to keep your sessions on a calendar.");
  if (gate) return gate;
  const p = params();
  const from = p.get("from") || isoDay(), to = p.get("to") || isoDay(13);
  const calendar = await api("GET", `/v1/me/calendar?from=${from}&to=${to}&timeZone=${enc(myZone())}`);
  const range = h("form", { "aria-label": "Date range", class: "pm-row", onsubmit: (e) => {
    e.preventDefault();
    location.hash = `#/calendar?${new URLSearchParams(new FormData(e.target))}`;
  } },
  h("label", {}, "From", h("input", { type: "date", name: "from", value: from, required: true })),
  h("label", {}, "To", h("input", { type: "date", name: "to", value: to, required: true })),
  h("button", { type: "submit" }, "Show"));
  return [h("h1", {}, "My calendar"), range,
    h("p", { class: "muted" }, `Times are ${zoneCity(calendar.timeZone)} time.`),
    calendar.days.length ? calendar.days.map((day) => h("section", { "aria-label": dayName(day.date, calendar.timeZone) },
      h("h2", {}, dayName(day.date, calendar.timeZone)),
      h("ul", { class: "list" }, day.items.map((event) => calendarItem(event, calendar.timeZone)))))
      : h("p", { class: "muted" }, "Nothing planned. ", h("a", { href: "#/sessions" }, "Find a session"), "."),
    subscription()];
}

/** Category ids and names, children indented under their parents. */
function flatten(categories, depth = 0) {
  return categories.flatMap((c) => [[c.id, `${"– ".repeat(depth)}${c.name}`], ...flatten(c.children || [], depth + 1)]);
}

/** #/quiz — the preferences quiz; replaces the stored answers (the wall's gender preference is kept). */
export async function quizScreen() {
  const gate = memberOnly("Preferences quiz", "Sign up to get suggestions made for you.");
  if (gate) return gate;
  const [me, sports, categories] = await Promise.all([api("GET", "/v1/me"), sportsList(), api("GET", "/v1/categories")]);
  const prefs = me.preferences || {};
  const form = h("form", { "aria-label": "Preferences quiz", class: "pm-form", onsubmit: async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const body = { sportsPlayed: data.getAll("sportsPlayed"), sportsNotWanted: data.getAll("sportsNotWanted"),
      preferredGenders: data.getAll("preferredGenders"), preferredAgeGroups: data.getAll("preferredAgeGroups"),
      favoriteCategories: data.getAll("favoriteCategories") };
    if (prefs.genderPreference) body.genderPreference = prefs.genderPreference;
    if (data.get("radiusMeters")) body.radiusMeters = Math.round(Number(data.get("radiusMeters")) * 1000);
    if (data.get("budget")) body.budget = Number(data.get("budget"));
    try {
      await api("PUT", "/v1/me/preferences", body);
      toast("Preferences saved");
      go("#/recs");
    } catch (error) { fieldErrors(form, error); }
  } },
  sportPicker("1. Sports you play", "sportsPlayed", sports, prefs.sportsPlayed, "None chosen yet."),
  sportPicker("2. Sports you don't want to play", "sportsNotWanted", sports, prefs.sportsNotWanted, "None."),
  checkboxes("3. Play with (empty means everyone)", "preferredGenders", GENDERS.map(([value, , people]) => [value, people]), prefs.preferredGenders),
  checkboxes("4. Age groups you like to play with", "preferredAgeGroups", Object.entries(AGE_GROUPS), prefs.preferredAgeGroups),
  h("div", { class: "pm-row" },
    h("label", {}, "5. How far you go (km)", h("input", { name: "radiusMeters", type: "number", min: 0.1, max: 500, step: 0.1,
      value: prefs.radiusMeters ? prefs.radiusMeters / 1000 : "" })),
    h("label", {}, "Budget per event", h("input", { name: "budget", type: "number", min: 0, step: 1, value: prefs.budget ?? "" }))),
  categories.items.length ? h("details", {}, h("summary", {}, "Favourite event categories"),
    checkboxes("Favourite categories", "favoriteCategories", flatten(categories.items), prefs.favoriteCategories)) : null,
  h("button", { type: "submit" }, "Save answers"));
  return [h("h1", {}, "Preferences quiz"), h("p", { class: "muted" }, "Your answers shape the sessions we suggest."), form];
}

function recommendation(item, context) {
  const card = sessionCard(item.event);
  const form = h("form", { "aria-label": `Not for me: ${item.event.name}`, class: "pm-row pm-dismiss", onsubmit: async (e) => {
    e.preventDefault();
    const reason = form.elements.reason.value;
    try {
      await api("POST", "/v1/me/recommendations/dismissals", reason ? { eventId: item.event.id, reason } : { eventId: item.event.id });
      card.replaceWith(h("li", { class: "muted", role: "status" }, `Hidden: ${item.event.name}. We'll suggest fewer like it.`));
    } catch (error) { fieldErrors(form, error); }
  } },
  select("Why not?", "reason", [["", "No reason"], ...REASONS], ""),
  h("button", { type: "submit", class: "secondary" }, "Not for me"));
  card.append(reasonList(item, context), form);
  return card;
}

/** #/recs — sessions ranked for me, each with its reasons and a "Not for me" with a reason. */
export async function recsScreen() {
  const gate = memberOnly("Suggested for you", "Sign up to get sessions suggested for you.");
  if (gate) return gate;
  const here = await position();
  const [list, context] = await Promise.all([api("GET", `/v1/me/recommendations/sessions?limit=20${here ? `&near=${here}` : ""}`),
    reasonContext()]);
  return [h("h1", {}, "Suggested for you"),
    h("p", { class: "muted" }, "Based on your quiz, your friends and what you played. ", h("a", { href: "#/quiz" }, "Take the quiz"), "."),
    list.items.length ? h("ul", { class: "list" }, list.items.map((item) => recommendation(item, context)))
      : h("p", { class: "muted" }, "No suggestions right now. ", h("a", { href: "#/sessions" }, "Search sessions"), " or ", h("a", { href: "#/newsession" }, "create one"), ".")];
}

/** #/stats or #/stats/<username> — sessions per sport, hours, playmates and friends. */
export async function statsScreen(username) {
  const name = username || session.user?.username;
  if (!name) return memberOnly("Player statistics", "Sign up to see your statistics.");
  const stats = await api("GET", `/v1/users/${enc(name)}/stats`);
  const mine = name === session.user?.username;
  const tile = (value, label) => h("div", { class: "card pm-stat" }, h("strong", {}, String(value)), h("span", { class: "muted" }, label));
  return [h("h1", {}, mine ? "My stats" : `@${name}'s stats`),
    h("div", { class: "pm-stats" }, tile(stats.sessionsPlayed, "sessions played"), tile(stats.hoursPlayed, "hours played"),
      tile(stats.distinctPlaymates, "playmates"), tile(stats.friends, "friends")),
    h("p", { class: "muted" }, "Sessions that have started and that they played in."),
    h("h2", {}, "By sport"),
    stats.sports.length ? h("table", { class: "pm-table" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Sport"),
      h("th", { scope: "col" }, "Sessions"), h("th", { scope: "col" }, "Hours"))),
    h("tbody", {}, stats.sports.map((s) => h("tr", {}, h("th", { scope: "row" }, s.sport.name), h("td", {}, String(s.sessions)),
      h("td", {}, String(Math.round((s.minutes / 60) * 10) / 10))))))
      : h("p", { class: "muted" }, "No sessions played yet."),
    h("p", { class: "links" }, h("a", { href: "#/friends" }, "Friends"), " · ", h("a", { href: "#/sessions" }, "Sessions"))];
}
