// Playmate (sports sessions with friends): helpers shared by its screens — the sports catalogue,
// how a session's length, seats and place read, a session card, and per-field form errors.
import { api, session, ApiError } from "./api.js";
import { h, errorText } from "./ui.js";
import { enc, distance, plural, label, sessionWhen, fieldSentence, words, GENDERS, AGE_GROUPS, SKILLS } from "./format.js";

export { SKILLS, TIMES, REASONS } from "./format.js";

let sports = null;
/** The sports catalogue (GET /v1/sports), fetched once per page load. */
export async function sportsList() {
  sports ??= api("GET", "/v1/sports").then((list) => list.items).catch((error) => { sports = null; throw error; });
  return sports;
}

/** "1 h 30 min". */
export function duration(minutes) {
  const hours = Math.floor(minutes / 60), rest = minutes % 60;
  return [hours ? `${hours} h` : "", rest ? `${rest} min` : ""].filter(Boolean).join(" ");
}

/** Free seats: "2 of 4 left" or "Full". */
export function seats(event) {
  const info = event.session;
  if (!info) return "";
  return info.openSpots <= 0 ? "Full" : `${info.openSpots} of ${info.capacity} left`;
}

export const isFull = (event) => !!event.session && event.session.openSpots <= 0;

/** Apple Maps and Google Maps links for a place. */
export function mapLinks(place) {
  return h("span", { class: "pm-maps links" },
    h("a", { href: place.appleMapsURL, rel: "noopener", target: "_blank" }, "Apple Maps"), " · ",
    h("a", { href: place.googleMapsURL, rel: "noopener", target: "_blank" }, "Google Maps"));
}

/** One session in a list: name, start, place, distance, seats and map links. */
export function sessionCard(event, number) {
  const full = isFull(event);
  return h("li", { class: "card pm-session" },
    h("a", { href: `#/session/${enc(event.id)}` }, h("strong", {}, number ? `${number}. ${event.name}` : event.name)),
    h("div", { class: "muted" }, sessionWhen(event), " · ", event.place.name,
      event.distanceMeters != null ? ` · ${distance(event.distanceMeters)}` : ""),
    h("div", {}, h("span", { class: full ? "pm-seats pm-full" : "pm-seats" }, seats(event)),
      event.myStatus === "going" ? h("span", { class: "pm-tag" }, "You play") : null, " ", mapLinks(event.place)));
}

// Why a session is suggested: the `why` of GET /v1/me/recommendations/sessions, strongest first,
// each saying what matched (sport and times played, level, friends, preferred genders and ages,
// distance), said here as a short phrase with the caller's preferences.

/** What the caller's suggestions are read with: their preferences (empty when unknown). */
export async function reasonContext() {
  const me = await api("GET", "/v1/me").catch(() => ({}));
  return { preferences: me.preferences || {} };
}

/** "@leo", "@leo and @ana", "@leo, @ana and 2 more" for `count` friends of whom `friends` are named. */
function friendList(friends, count) {
  const names = friends.map((f) => `@${f.username}`);
  if (count > names.length) names.push(`${count - names.length} more`);
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : names[0];
}

/** Why a suggested session is for the caller, as short phrases naming what matched ("Tennis, your
 * sport", "Your friend @leo is going", "Intermediate, the level you play", "Women, as you like:
 * 2 playing", "1.2 km away"); `context` is reasonContext()'s. A reason of a kind it does not know
 * is shown in the server's words. */
export function reasonPhrases(item, context = {}) {
  const { preferences = {} } = context;
  const sport = item.event.session?.sport.name || "This sport";
  const either = (values, table, column) => values.map((value) => label(table, value, column).toLowerCase()).join(" or ");
  const upper = (text) => text.charAt(0).toUpperCase() + text.slice(1);
  const times = (n) => n === 1 ? "once" : `${n} times`;
  return (item.why || []).map((reason) => {
    switch (reason.kind) {
      case "sport": return reason.count ? `${sport}, you've played it ${times(reason.count)}` : `${sport}, your sport`;
      case "level": return `${label(SKILLS, reason.skill)}, the level you've played ${times(reason.count)}`;
      case "friends": return !reason.friends?.length ? `${plural(reason.count, "friend")} of yours going`
        : reason.count > 1 ? `Your friends ${friendList(reason.friends, reason.count)} are going`
          : `Your friend ${friendList(reason.friends, reason.count)} is going`;
      case "genders": return preferences.preferredGenders?.length
        ? `${upper(either(preferences.preferredGenders, GENDERS, 2))}, as you like: ${reason.count} playing`
        : `${plural(reason.count, "player")} of the genders you like`;
      case "ageGroups": return preferences.preferredAgeGroups?.length
        ? `Aged ${either(preferences.preferredAgeGroups, AGE_GROUPS)}, as you like: ${reason.count} playing`
        : `${plural(reason.count, "player")} of the ages you like`;
      case "time": return `Around ${String(reason.hour).padStart(2, "0")}:00, when you've played ${times(reason.count)}`;
      case "distance": return `${distance(reason.distanceMeters)} away`;
      default: return reason.text.replace(/\.$/, "");
    }
  });
}

/** The reasons of a suggestion as a list. */
export function reasonList(item, context) {
  return h("ul", { class: "pm-reasons", "aria-label": "Why we suggest it" }, reasonPhrases(item, context).map((r) => h("li", {}, r)));
}

/** A person's name for lists: display name and @username. */
export function personName(user) {
  return user.displayName ? `${user.displayName} (@${user.username})` : `@${user.username}`;
}

const aliases = { description: "notes", "spot.label": "spotLabel", spot: "placeId", "spot.location": "placeId" };

/** Shows an API problem next to the fields it names (role="alert"), the rest above the button. */
export function fieldErrors(form, error) {
  form.querySelectorAll(".error").forEach((node) => node.remove());
  form.querySelectorAll("[aria-invalid]").forEach((node) => node.removeAttribute("aria-invalid"));
  const rest = [];
  for (const issue of error instanceof ApiError ? error.fields : []) {
    const input = form.elements[aliases[issue.field] || issue.field];
    if (input && input.closest) {
      input.setAttribute("aria-invalid", "true");
      (input.closest("label") || input).after(h("p", { class: "error", role: "alert" }, issue.message));
    } else rest.push(fieldSentence(words(issue.field), issue.message));
  }
  if (!(error instanceof ApiError) || !error.fields.length) rest.push(errorText(error));
  if (rest.length) form.querySelector("[type=submit]").before(h("p", { class: "error", role: "alert" }, rest.join(" · ")));
  form.querySelector("[aria-invalid]")?.focus();
}

/** For member-only screens: a heading and a sign-up prompt instead of the screen. */
export function memberOnly(title, why) {
  if (session.isMember) return null;
  return [h("h1", {}, title), h("p", {}, why), h("a", { href: "#/start", class: "button" }, "Sign up")];
}

/** Checkboxes named `name` in a fieldset with a legend; `checked` is a list of values. */
export function checkboxes(legend, name, options, checked = []) {
  return h("fieldset", { class: "pm-checks" }, h("legend", {}, legend),
    options.map(([value, label]) => h("label", { class: "pm-check" },
      h("input", { type: "checkbox", name, value, checked: checked.includes(value) }), label)));
}

/** A searchable list of sports instead of a check box per sport: type in "Find a sport", choose
 * from the matching sports (buttons "Add Curling"; Enter takes the first, the arrow keys move
 * between them) and the chosen ones show as chips ("Remove Curling"). Each chosen sport is a
 * hidden input named `name`, so the form sends what check boxes named `name` would. */
export function sportPicker(legend, name, sports, chosen = [], none = "All sports.") {
  const picked = [...new Set(chosen)];
  const chips = h("ul", { class: "pm-chips", "aria-label": `${legend}: chosen` });
  const matches = h("ul", { class: "pm-matches", "aria-label": "Matching sports" });
  const said = h("p", { class: "muted pm-said", role: "status" });
  const input = h("input", { type: "search", autocomplete: "off", placeholder: "Type a sport's name" });
  const nameOf = (slug) => sports.find((s) => s.slug === slug)?.name || words(slug);

  function draw(message = "") {
    chips.replaceChildren(...picked.map((slug) => h("li", {}, h("input", { type: "hidden", name, value: slug }),
      h("button", { type: "button", class: "pm-chip", "data-slug": slug, "aria-label": `Remove ${nameOf(slug)}`,
        onclick: () => remove(slug) }, nameOf(slug), h("span", { "aria-hidden": "true" }, " ×")))));
    chips.hidden = !picked.length;
    const query = input.value.trim().toLowerCase();
    const found = query ? sports.filter((s) => !picked.includes(s.slug) && s.name.toLowerCase().includes(query)) : [];
    const first = (s) => s.name.toLowerCase().startsWith(query);
    matches.replaceChildren(...[...found.filter(first), ...found.filter((s) => !first(s))].slice(0, 8).map((s) =>
      h("li", {}, h("button", { type: "button", class: "secondary", "aria-label": `Add ${s.name}`, onclick: () => add(s.slug) }, s.name))));
    said.textContent = message || (query && !found.length ? `No sport matches "${input.value.trim()}".`
      : !query && !picked.length ? none : "");
  }
  function add(slug) {
    picked.push(slug);
    input.value = "";
    draw(`${nameOf(slug)} added.`);
    input.focus();
  }
  function remove(slug) {
    const at = picked.indexOf(slug);
    picked.splice(at, 1);
    draw(`${nameOf(slug)} removed.`);
    const neighbour = picked[at] ?? picked[at - 1];
    (neighbour ? chips.querySelector(`[data-slug="${CSS.escape(neighbour)}"]`) : input).focus();
  }
  input.addEventListener("input", () => draw());
  input.addEventListener("keydown", (event) => {
    const first = matches.querySelector("button");
    if (!first || !["Enter", "ArrowDown"].includes(event.key)) return;
    event.preventDefault(); // Enter takes the first match instead of sending the form
    event.key === "Enter" ? first.click() : first.focus();
  });
  matches.addEventListener("keydown", (event) => {
    const item = event.target.closest("li");
    const moves = { ArrowDown: () => item.nextElementSibling?.querySelector("button"),
      ArrowUp: () => item.previousElementSibling?.querySelector("button") || input, Escape: () => input };
    if (!moves[event.key]) return;
    event.preventDefault();
    moves[event.key]()?.focus();
  });
  draw();
  return h("fieldset", { class: "pm-picker" }, h("legend", {}, legend), chips, h("label", {}, "Find a sport", input), matches, said);
}

/** A select named `name` from [value, label] pairs, with `selected`. */
export function select(label, name, options, selected, extra = {}) {
  return h("label", {}, label, h("select", { name, ...extra },
    options.map(([value, text]) => h("option", { value, selected: value === selected }, text))));
}
