// Playmate session screens: a session's detail (#/session/<id>: join, leave, invite friends; its
// creator edits or deletes it) and the create form (#/newsession) with the place picked from
// nearby places, a place search (falling back to geocoding a city) or the user's own position.
import { api, session, ApiError } from "./api.js";
import { h, toast, position, requireMember, actionButton, avatar, split } from "./ui.js";
import { go } from "./router.js";
import { findCity } from "./city.js";
import { enc, distance, isoDay, sessionWhen, plural } from "./format.js";
import { SKILLS, sportsList, duration, seats, isFull, mapLinks, personName, fieldErrors, memberOnly, select } from "./playmate-common.js";

let flash = null; // { id, text }: a message the next render of that session shows (join/leave results, a 409)

/** Re-renders the session screen with `text` announced. */
function say(id, text) { flash = { id, text }; go(location.hash); }

const SKIPPED = { notFriend: "is not your friend", alreadyInvited: "was already invited", alreadyGoing: "already plays" };

async function setGoing(event, going) {
  if (!requireMember()) return;
  const path = `/v1/events/${enc(event.id)}/attendance`;
  try {
    if (going) await api("PUT", path, { status: "going" });
    else await api("DELETE", path);
    say(event.id, going ? "You're in. See you there!" : "You left this session.");
  } catch (error) {
    if (error.status === 409) say(event.id, error.message);
    else toast(error.message);
  }
}

/** Join / Leave; a full session shows "Full" and a disabled Join. */
function attendance(event, mine) {
  if (mine) return h("p", { class: "muted" }, "You organise this session.");
  if (event.myStatus === "going") return h("p", {}, actionButton("Leave", () => setGoing(event, false), { class: "secondary" }));
  const full = isFull(event);
  return h("p", {}, h("button", { type: "button", disabled: full, "aria-describedby": "pm-seats", onclick: () => setGoing(event, true) }, "Join"),
    full ? h("span", { class: "muted" }, " Every spot is taken.") : null);
}

/** "Invite friends": pick friends, then POST the invitations and say who was invited or skipped. */
function inviter(event) {
  const box = h("section", { "aria-label": "Invite friends" });
  const open = async () => {
    if (!requireMember()) return;
    const friends = await api("GET", "/v1/me/friends?limit=100");
    if (!friends.items.length) return box.replaceChildren(h("p", { class: "muted" }, "No friends yet. ", h("a", { href: "#/friends" }, "Add friends"), "."));
    const result = h("p", { role: "status" });
    const form = h("form", { "aria-label": "Invite friends", class: "pm-form", onsubmit: async (e) => {
      e.preventDefault();
      const userIds = new FormData(form).getAll("userIds");
      if (!userIds.length) return fieldErrors(form, new Error("Pick at least one friend."));
      try {
        const answer = await api("POST", `/v1/events/${enc(event.id)}/invitations`, { userIds });
        const names = new Map(friends.items.map((f) => [f.user.id, `@${f.user.username}`]));
        result.textContent = [answer.invited.length ? `Invited ${answer.invited.map((i) => `@${i.to.username}`).join(", ")}.` : "",
          ...answer.skipped.map((s) => `${names.get(s.userId) || s.userId} ${SKIPPED[s.reason] || s.reason}.`)].join(" ");
      } catch (error) { fieldErrors(form, error); }
    } },
    h("fieldset", { class: "pm-checks" }, h("legend", {}, "Friends to invite"),
      friends.items.map((f) => h("label", { class: "pm-check" }, h("input", { type: "checkbox", name: "userIds", value: f.user.id }), personName(f.user)))),
    h("button", { type: "submit" }, "Send invitations"));
    box.replaceChildren(form, result);
  };
  box.append(actionButton("Invite friends", open, { class: "secondary" }));
  return box;
}

/** The creator's edit form (capacity, start, notes) and a two-step delete. */
function editor(event) {
  const form = h("form", { "aria-label": "Edit session", class: "pm-form", onsubmit: async (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    const patch = {};
    if (Number(data.capacity) !== event.session.capacity) patch.capacity = Number(data.capacity);
    if (data.localDate !== event.localDate) patch.localDate = data.localDate;
    if (data.localTime !== (event.localTime || "")) patch.localTime = data.localTime;
    if (data.notes !== (event.description || "")) patch.notes = data.notes;
    try {
      if (Object.keys(patch).length) await api("PATCH", `/v1/sessions/${enc(event.id)}`, patch);
      say(event.id, "Saved.");
    } catch (error) { fieldErrors(form, error); }
  } },
  h("label", {}, "Capacity", h("input", { name: "capacity", type: "number", min: 2, max: 1000, required: true, value: event.session.capacity })),
  h("div", { class: "pm-row" },
    h("label", {}, "Date", h("input", { name: "localDate", type: "date", required: true, value: event.localDate })),
    h("label", {}, "Time", h("input", { name: "localTime", type: "time", required: true, value: event.localTime || "" }))),
  h("label", {}, "Notes", h("textarea", { name: "notes", rows: 3, maxlength: 2000 }, event.description || "")),
  h("button", { type: "submit" }, "Save changes"));
  const remove = h("p", {}, actionButton("Delete session", () => remove.replaceChildren(
    h("span", {}, "Delete it for everyone? "),
    actionButton("Yes, delete", async () => {
      await api("DELETE", `/v1/sessions/${enc(event.id)}`);
      toast("Session deleted");
      go("#/sessions");
    }), " ", h("button", { type: "button", class: "secondary", onclick: () => go(location.hash) }, "Keep it")), { class: "secondary" }));
  return h("details", { class: "card" }, h("summary", {}, "Edit or delete"), form, remove);
}

/** #/session/<id> — sport, skill, start, place, seats, players, notes and what you can do. */
export async function sessionScreen(id) {
  // The players, the map's module and its settings load meanwhile: one round trip to first paint, not three.
  const playersLoad = api("GET", `/v1/sessions/${enc(id)}/players`).catch(() => ({ items: [] }));
  const mapLoad = import("./map.js").then((map) => { map.mapConfig(); return map; });
  const event = await api("GET", `/v1/events/${enc(id)}`);
  if (event.kind !== "session") return [h("h1", {}, event.name), h("p", {}, h("a", { href: `#/event/${enc(id)}` }, "Open this event"))];
  const players = await playersLoad;
  const info = event.session;
  const mine = session.isMember && event.organizerId === session.user.id;
  const message = flash?.id === id ? flash.text : "";
  flash = null;
  // The session, and beside it on a wide screen (below on a phone) its place and its players.
  return [split([h("h1", {}, event.name),
    h("p", { class: "pm-alert", role: "alert" }, message),
    h("dl", { class: "pm-facts" },
      h("dt", {}, "Sport"), h("dd", {}, info.sport.name),
      h("dt", {}, "Skill"), h("dd", {}, (SKILLS.find(([v]) => v === info.skill) || [, info.skill])[1]),
      h("dt", {}, "Starts"), h("dd", {}, sessionWhen(event), ` · ${duration(info.durationMinutes)}`),
      h("dt", {}, "Where"), h("dd", {}, event.place.name, event.place.address?.street ? `, ${event.place.address.street}` : "",
        event.place.address?.city ? `, ${event.place.address.city}` : "", h("br"), mapLinks(event.place)),
      h("dt", {}, "Spots"), h("dd", {}, `${info.occupied} playing, capacity ${info.capacity} · `,
        h("strong", { id: "pm-seats", class: isFull(event) ? "pm-seats pm-full" : "pm-seats" }, seats(event)))),
    event.description ? h("p", { class: "pm-notes" }, event.description) : null,
    attendance(event, mine),
    mine || event.myStatus === "going" ? inviter(event) : null,
    mine ? editor(event) : null], [
    await (await mapLoad).placeMap(event.place),
    h("h2", {}, "Players"),
    h("ul", { class: "list", "aria-label": "Players" }, players.items.map((user) => h("li", { class: "pm-player" }, avatar(user, "tiny"), " ",
      h("a", { href: `#/stats/${enc(user.username)}` }, personName(user)), user.id === event.organizerId ? h("span", { class: "pm-tag" }, "organiser") : null)))]),
    h("p", {}, h("a", { href: "#/sessions" }, "← All sessions"))];
}

/** Fills the place select with `places` (nearest first), keeping "my position" when known. */
function fillPlaces(select, places, here) {
  select.replaceChildren(h("option", { value: "" }, places.length ? "Choose a place" : "No places found — search above"),
    ...places.map((p) => h("option", { value: p.id }, `${p.name}${p.distanceMeters != null ? ` (${distance(p.distanceMeters)})` : ""}`)),
    here ? h("option", { value: "spot" }, "My position (name the spot below)") : null);
}

/** Sports places (Playmate's own: never a bar) matching the text; when none, those near the city of
 * that name (geocoding). */
async function findPlaces(text, here) {
  const near = here ? `&near=${here}&radius=100000` : "";
  const found = await api("GET", `/v1/places?q=${enc(text)}${near}&group=sports&limit=30`);
  if (found.items.length) return found.items;
  const city = await findCity(text);
  if (!city) return [];
  return (await api("GET", `/v1/places?near=${city.location.lat},${city.location.lon}&radius=5000&group=sports&limit=30`)).items;
}

function placePicker(here, nearby) {
  const choice = h("select", { name: "placeId", required: true });
  fillPlaces(choice, nearby, here);
  const spot = h("label", { hidden: true, class: "pm-spot" }, "Spot name", h("input", { name: "spotLabel", maxlength: 200 }));
  choice.addEventListener("change", () => { spot.hidden = choice.value !== "spot"; spot.querySelector("input").required = !spot.hidden; });
  const text = h("input", { name: "placeQuery", type: "search", autocomplete: "off" });
  const status = h("span", { role: "status", class: "muted" });
  const search = async () => {
    if (!text.value.trim()) return;
    const places = await findPlaces(text.value.trim(), here);
    fillPlaces(choice, places, here);
    status.textContent = `${plural(places.length, "place")} found`;
    if (places.length) choice.value = places[0].id;
  };
  text.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); search().catch((error) => toast(error.message)); } });
  return h("fieldset", {}, h("legend", {}, "Where"),
    h("div", { class: "pm-row pm-search" }, h("label", {}, "Find a place or city", text), actionButton("Search places", search, { class: "secondary" })),
    status, h("label", {}, "Place", choice), spot);
}

/** The session request body from the create form. */
function sessionBody(data, here) {
  const body = { sport: data.sport, skill: data.skill, localDate: data.localDate, localTime: data.localTime,
    durationMinutes: Number(data.durationMinutes), capacity: Number(data.capacity) };
  if (data.notes.trim()) body.notes = data.notes.trim();
  if (data.placeId === "spot") {
    const [lat, lon] = here.split(",").map(Number);
    body.spot = { location: { lat, lon }, label: data.spotLabel };
  } else if (data.placeId) body.placeId = data.placeId;
  return body;
}

/** Fields the server cannot be asked about without them (an empty choice). */
function missing(data) {
  const errors = [];
  if (!data.sport) errors.push({ field: "sport", message: "Choose a sport." });
  if (!data.placeId) errors.push({ field: "placeId", message: "Choose a place (search above) or your position." });
  if (data.placeId === "spot" && !data.spotLabel.trim()) errors.push({ field: "spotLabel", message: "Name the spot." });
  return errors.length ? new ApiError({ detail: "Check the marked fields.", errors }, 400) : null;
}

/** #/newsession — the create form; the server's field errors show next to their fields. */
export async function newSessionScreen() {
  const gate = memberOnly("Create a session", "Sign up to create sessions.");
  if (gate) return gate;
  const [sports, here] = await Promise.all([sportsList(), position()]);
  const nearby = here ? (await api("GET", `/v1/places?near=${here}&radius=5000&group=sports&limit=40`)).items : [];
  const hour = (new Date().getHours() + 2) % 24;
  const form = h("form", { "aria-label": "New session", class: "pm-form", novalidate: true, onsubmit: async (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    const problem = missing(data);
    if (problem) return fieldErrors(form, problem);
    try {
      const created = await api("POST", "/v1/sessions", sessionBody(data, here));
      toast("Session created");
      go(`#/session/${enc(created.id)}`);
    } catch (error) { fieldErrors(form, error); }
  } },
  select("Sport", "sport", [["", "Choose a sport"], ...sports.map((s) => [s.slug, s.name])], "", { required: true }),
  select("Skill level", "skill", SKILLS, "any"),
  h("div", { class: "pm-row" },
    h("label", {}, "Date", h("input", { name: "localDate", type: "date", required: true, value: hour < 2 ? isoDay(1) : isoDay() })),
    h("label", {}, "Time", h("input", { name: "localTime", type: "time", required: true, value: `${String(hour).padStart(2, "0")}:00` }))),
  h("div", { class: "pm-row" },
    h("label", {}, "Duration (minutes)", h("input", { name: "durationMinutes", type: "number", min: 15, max: 1440, step: 15, value: 90 })),
    h("label", {}, "Capacity (players)", h("input", { name: "capacity", type: "number", min: 2, max: 1000, value: 4 }))),
  placePicker(here, nearby),
  h("label", {}, "Notes", h("textarea", { name: "notes", rows: 3, maxlength: 2000, placeholder: "Bring a ball, meet at the gate…" })),
  h("button", { type: "submit" }, "Create session"));
  return [h("h1", {}, "Create a session"), form];
}
