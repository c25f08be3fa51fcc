// Playmate (sports sessions with friends): helpers shared by its screens — the sports catalogue,
// how a session's length, seats and place read, a session card, and per-field form errors.
import { api, session, ApiError } from "./api.js";
import { h, errorText } from "./ui.js";
import { enc, distance, sessionWhen, fieldSentence, words } from "./format.js";

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
  return h("span", { class: "pm-maps" },
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

/** A select named `name` from [value, label] pairs, with `selected`. */
export function select(label, name, options, selected, extra = {}) {
  return h("label", {}, label, h("select", { name, ...extra },
    options.map(([value, text]) => h("option", { value, selected: value === selected }, text))));
}
