// Playmate search (#/sessions): sessions that have not started, filtered by sports, skill, dates,
// time of day, radius around you (or a city), open spots and friends; sorted by start or distance;
// shown as a list or as a small map.
//
// The "Map" view is a Leaflet map (Web/map.js, loaded on demand) with tiles from the server's tile
// server (GET /v1/config); without one it is a plain SVG plot of the results relative to you (rings
// at distances) — both followed by the list of results with how far and which way each is, so it
// works with a screen reader.
import { api, session } from "./api.js";
import { h, position, split } from "./ui.js";
import { params } from "./router.js";
import { findCity } from "./city.js";
import { enc, direction, distance, plural } from "./format.js";
import { SKILLS, TIMES, sportsList, sessionCard, sportPicker, select, isFull, seats, reasonContext, reasonList } from "./playmate-common.js";

const SVG = "http://www.w3.org/2000/svg";
const RADII = [["2000", "2 km"], ["5000", "5 km"], ["10000", "10 km"], ["25000", "25 km"], ["50000", "50 km"], ["100000", "100 km"]];

/** Builds an SVG element (h() makes HTML elements only). */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  element.append(...children);
  return element;
}

/** The centre of the search: a city typed in "Near" (geocoded), else the browser's position. */
async function centre(where) {
  if (!where) return { near: await position(), label: "you" };
  const city = await findCity(where);
  return city ? { near: `${city.location.lat},${city.location.lon}`, label: city.name } : { near: await position(), label: "you" };
}

/** The API query for the screen's parameters. */
function searchQuery(p, near) {
  const query = new URLSearchParams({ limit: "30" });
  const sports = p.getAll("sport").filter(Boolean);
  if (sports.length) query.set("sport", sports.join(","));
  for (const key of ["skill", "from", "to", "timeOfDay"]) if (p.get(key)) query.set(key, p.get(key));
  if (near) { query.set("near", near); query.set("radius", p.get("radius") || "10000"); }
  if (p.get("openOnly")) query.set("openOnly", "true");
  if (p.get("withFriends") && session.isMember) query.set("withFriends", "true");
  query.set("sort", near && p.get("sort") === "distance" ? "distance" : "start");
  return query;
}

const FILTERS = ["sport", "skill", "from", "to", "timeOfDay", "where", "openOnly", "withFriends"];

/** The filters, folded away on phones unless some are set. */
function filterForm(p, sports) {
  const active = FILTERS.filter((key) => p.get(key)).length;
  return h("details", { class: "card pm-filter-box", open: active > 0 || window.matchMedia("(min-width: 720px)").matches },
    h("summary", {}, active ? `Filters (${active} set)` : "Filters"), filterFields(p, sports));
}

function filterFields(p, sports) {
  const chosen = p.getAll("sport");
  return h("form", { "aria-label": "Filters", class: "pm-form", onsubmit: (event) => {
    event.preventDefault();
    const data = new URLSearchParams([...new FormData(event.target)].filter(([, value]) => value !== ""));
    if (p.get("view")) data.set("view", p.get("view"));
    location.hash = `#/sessions?${data}`;
  } },
    sportPicker("Sports", "sport", sports, chosen),
    h("div", { class: "pm-row" },
      select("Skill", "skill", [["", "Any"], ...SKILLS], p.get("skill") || ""),
      select("Time of day", "timeOfDay", [["", "Any time"], ...TIMES], p.get("timeOfDay") || "")),
    h("div", { class: "pm-row" },
      h("label", {}, "From", h("input", { type: "date", name: "from", value: p.get("from") || "" })),
      h("label", {}, "To", h("input", { type: "date", name: "to", value: p.get("to") || "" }))),
    h("div", { class: "pm-row" },
      h("label", {}, "Near (city; empty = my position)", h("input", { name: "where", value: p.get("where") || "", autocomplete: "address-level2" })),
      select("Radius", "radius", RADII, p.get("radius") || "10000")),
    h("div", { class: "pm-row" },
      h("label", { class: "pm-check" }, h("input", { type: "checkbox", name: "openOnly", value: "1", checked: !!p.get("openOnly") }), "Open spots only"),
      session.isMember ? h("label", { class: "pm-check" },
        h("input", { type: "checkbox", name: "withFriends", value: "1", checked: !!p.get("withFriends") }), "With friends") : null),
    select("Sort by", "sort", [["start", "Start"], ["distance", "Distance"]], p.get("sort") || "start"),
    h("button", { type: "submit" }, "Search"));
}

/** Metres east and north of `origin` ("lat,lon") — close enough for a city-sized plot. */
function offset(origin, point) {
  const [lat0, lon0] = origin.split(",").map(Number);
  return [(point.lon - lon0) * Math.cos((lat0 * Math.PI) / 180) * 111320, (point.lat - lat0) * 110540];
}

/** Where a result is from the centre, in words: "1.2 km north-east of you", "150 m west of Berlin",
 * "here" ("" without a centre: the first result stands in for it). */
function whereFrom([east, north], event, label) {
  if (!label) return "";
  const away = event.distanceMeters ?? Math.hypot(east, north);
  const towards = direction(east, north);
  return towards ? `${distance(away)} ${towards} of ${label}` : `right by ${label}`;
}

/** Draws a tile map, `(pins, options) → box` (Web/map.js, loaded now), or null when the server has no tiles. */
async function tileMaker() {
  const maps = await import("./map.js");
  const config = await maps.mapConfig();
  return config && ((pins, options) => maps.tileMap(config, pins, options));
}

/** The results plotted around the centre, numbered as in the list under it (which says how far and
 * which way each is, never coordinates); on tiles with `tileMap`. */
function plot(items, near, label, tileMap) {
  const origin = near || `${items[0].place.location.lat},${items[0].place.location.lon}`;
  const points = items.map((event) => offset(origin, event.place.location));
  const reach = Math.max(500, ...points.map(([x, y]) => Math.hypot(x, y)));
  const scale = 140 / reach;
  const drawing = svg("svg", { viewBox: "-160 -160 320 320", class: "pm-plot", role: "img",
    "aria-label": `Sessions around ${label}; the outer ring is ${distance(reach)} away` },
  svg("circle", { r: 140, class: "pm-ring" }), svg("circle", { r: 70, class: "pm-ring" }),
  svg("text", { x: 4, y: -142, class: "pm-ring-label" }, distance(reach)),
  svg("circle", { r: 5, class: "pm-me" }), svg("text", { x: 8, y: 4, class: "pm-me-label" }, label));
  const where = h("ol", { class: "pm-where" }, items.map((event, i) => h("li", {},
    h("a", { href: `#/session/${enc(event.id)}` }, event.name),
    [` — ${event.place.name}`, whereFrom(points[i], event, near ? label : ""), seats(event)].filter(Boolean).join(" · "))));
  if (tileMap) {
    const [lat, lon] = origin.split(",").map(Number);
    const pins = items.map((event) => ({ ...event.place.location, href: `#/session/${enc(event.id)}`, title: `${event.name} — ${seats(event)}` }));
    return [tileMap(pins, { label: `Map of sessions around ${label}`, you: near ? { lat, lon, title: label === "you" ? "You" : label } : null, numbered: true }), where];
  }
  const taken = new Map(); // points at the same spot fan out to the right so each stays visible
  items.forEach((event, i) => {
    const key = points[i].map((v) => Math.round(v * scale / 9)).join();
    const nudge = (taken.get(key) || 0) * 20 / scale;
    taken.set(key, (taken.get(key) || 0) + 1);
    const [x, y] = [points[i][0] + nudge, points[i][1]];
    drawing.append(svg("a", { href: `#/session/${enc(event.id)}` },
      svg("title", {}, `${i + 1}. ${event.name} — ${seats(event)}`),
      svg("circle", { cx: (x * scale).toFixed(1), cy: (-y * scale).toFixed(1), r: 9, class: isFull(event) ? "pm-dot pm-dot-full" : "pm-dot" }),
      svg("text", { x: (x * scale).toFixed(1), y: (-y * scale + 4).toFixed(1), class: "pm-dot-label" }, String(i + 1))));
  });
  return [h("p", { class: "muted" }, "Where they are, around ", label, ":"), drawing, where];
}

function links() {
  return h("nav", { class: "pm-links", "aria-label": "Playmate" },
    [["#/newsession", "Create a session"], ["#/calendar", "My calendar"], ["#/invitations", "Invitations"],
      ["#/friends", "Friends"], ["#/recs", "Suggested for you"], ["#/quiz", "Preferences quiz"], ["#/stats", "My stats"]]
      .map(([href, label]) => h("a", { href }, label)));
}

/** A suggested session's card with why it is suggested. */
function suggestion(item, context) {
  const card = sessionCard(item.event);
  card.append(reasonList(item, context));
  return card;
}

/** Playmate's home, as its seed draws it: my next sessions and suggested ones, each a row that
 * scrolls sideways, above the search (members, on the plain screen without filters). */
async function carousels(near) {
  if (!session.isMember) return [];
  const [mine, suggested, context] = await Promise.all([
    api("GET", "/v1/me/events?kind=session&status=going&limit=10").catch(() => ({ items: [] })),
    api("GET", `/v1/me/recommendations/sessions?limit=10${near ? `&near=${near}` : ""}`).catch(() => ({ items: [] })),
    reasonContext()]);
  const row = (title, cards, empty) => h("section", { class: "pm-home", "aria-label": title }, h("h2", {}, title),
    cards.length ? h("ul", { class: "pm-carousel", "aria-label": title }, cards) : h("p", { class: "muted" }, empty));
  return [row("Your next sessions", mine.items.map((event) => sessionCard(event)), "None yet: join one below or create one."),
    row("Suggested for you", suggested.items.map((item) => suggestion(item, context)),
      "No suggestions yet: take the quiz to get some.")];
}

/** #/sessions — search with filters; list or map view. */
export async function sessionsScreen() {
  const p = params();
  const [sports, { near, label }] = await Promise.all([sportsList(), centre(p.get("where"))]);
  const home = [...p.keys()].length ? [] : await carousels(near);
  const query = searchQuery(p, near);
  const page = await api("GET", `/v1/sessions?${query}`);
  const mapView = p.get("view") === "map";
  const tileMap = mapView ? await tileMaker() : null;
  const toggle = new URLSearchParams(p);
  mapView ? toggle.delete("view") : toggle.set("view", "map");
  const list = h("ul", { class: "list", "aria-label": "Sessions found" }, page.items.map((event) => sessionCard(event)));
  let cursor = page.nextCursor;
  const more = h("button", { type: "button", class: "secondary", onclick: async () => {
    query.set("cursor", cursor);
    const next = await api("GET", `/v1/sessions?${query}`);
    list.append(...next.items.map((event) => sessionCard(event)));
    cursor = next.nextCursor;
    if (!cursor) more.remove();
  } }, "More sessions");
  const results = !page.items.length ? h("p", { class: "muted" }, "No sessions match. ", h("a", { href: "#/newsession" }, "Create one"), ".")
    : mapView ? plot(page.items, near, label, tileMap) : [list, cursor ? more : null];
  return [h("h1", {}, "Sports sessions"), links(), ...home, split([
    h("p", { class: "pm-toolbar" }, h("span", { role: "status" }, cursor ? `${page.items.length}+ sessions` : plural(page.items.length, "session")),
      h("a", { href: `#/sessions?${toggle}`, class: "button secondary" }, mapView ? "List" : "Map")),
    results], [near ? null : h("p", { class: "muted" }, "Allow location (or type a city) to search nearby and sort by distance."),
    filterForm(p, sports)], true)];
}
