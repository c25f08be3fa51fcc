// Tickets Tonight: shows tonight / this weekend near me (category and budget filters), an event's
// detail (time on the venue's clock, prices, tickets, maps, follow / going, changes), artist search
// as you type, an artist's page (favourite, upcoming events, similar artists), my favourites with
// their events, and the explore cards (events by artists similar to my favourites; swipe them).
import { api, session, pagePath } from "./api.js";
import { h, toast, position, requireMember, actionButton, split, avatar } from "./ui.js";
import { go, onLeave, params } from "./router.js";
import { locate } from "./city.js";
import { enc, plural, shownName, distance, deviceZone, isoDate, dayName, timeName, fromNow, eventWhen, label, EVENT_STATUSES, TICKETED,
  TICKETED_QUERY } from "./format.js";

const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

// formatting

function amount(value, currency) {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: currency || "USD",
      minimumFractionDigits: Number.isInteger(value) ? 0 : 2 }).format(value);
  } catch { return `${value} ${currency || ""}`.trim(); }
}

/** "€18–€28.50", "Free", or "" when the price is not known. */
export function price(event) {
  const { minPrice: min, maxPrice: max, currency } = event;
  if (min == null && max == null) return "";
  if ((max ?? min) === 0) return "Free";
  if (min == null || max == null || min === max) return amount(min ?? max, currency);
  return `${amount(min, currency)}–${amount(max, currency)}`;
}

/** A badge for a status worth a word (not scheduled or on sale). */
const statusBadge = (event) => ["scheduled", "onsale"].includes(event.status) ? null
  : h("span", { class: `tt-status tt-${event.status}` }, label(EVENT_STATUSES, event.status));

/** The links between the Tickets Tonight screens. */
function subnav(current) {
  const links = [["events", "Near me"], ["explore", "Explore"], ["artists", "Artists"], ["favorites", "Favourites"]];
  return h("nav", { class: "tt-subnav", "aria-label": "Events" }, links.map(([route, label]) =>
    h("a", { href: `#/${route}`, "aria-current": route === current ? "page" : false }, label)));
}

const artistLinks = (performers) => performers.flatMap((p, i) =>
  [i ? ", " : "", h("a", { href: `#/artist/${enc(p.id)}` }, p.name)]);

/** An event's picture: its first performer's with one, else its venue's (served by our media). */
const eventImage = (event) => event.performers.find((p) => p.imageURL)?.imageURL || event.place.imageURL;

/** One event as a list item: its picture, name (to the detail), when, where, distance, price,
 * category, artists. */
export function eventItem(event) {
  const facts = [eventWhen(event), event.place.name, distance(event.distanceMeters), price(event), event.category?.name]
    .filter(Boolean).join(" · ");
  const image = eventImage(event);
  return h("li", { class: image ? "card tt-event tt-with-image" : "card tt-event" },
    image ? h("img", { src: image, alt: "", class: "tt-thumb", loading: "lazy", width: 72, height: 72 }) : null,
    h("div", {},
      h("a", { href: `#/event/${enc(event.id)}`, class: "tt-title" }, event.name), " ", statusBadge(event),
      h("div", { class: "muted" }, facts),
      event.performers.length ? h("div", { class: "tt-artists" }, artistLinks(event.performers)) : null));
}

const emptyNote = (text) => h("p", { class: "muted" }, text);

function eventList(events, empty = "Nothing found.") {
  return events.length ? h("ul", { class: "list" }, events.map(eventItem)) : emptyNote(empty);
}

/** A list that loads `path` page by page ("More" follows nextCursor). */
async function pagedEvents(path, empty) {
  const page = await api("GET", path);
  const list = eventList(page.items, empty);
  if (!page.nextCursor) return list;
  let cursor = page.nextCursor;
  const more = actionButton("More", async () => {
    const next = await api("GET", pagePath(path, { cursor }));
    list.append(...next.items.map(eventItem));
    cursor = next.nextCursor;
    if (!cursor) more.remove();
  }, { class: "secondary" });
  return [list, more];
}

// #/events

const windows = { tonight: "Tonight", weekend: "This weekend", week: "Next 7 days", upcoming: "All upcoming" };

function apiWhen(key) {
  if (key === "week") return `${isoDate(new Date())}..${isoDate(new Date(Date.now() + 6 * 86400000))}`;
  return key === "upcoming" ? null : key;
}

const flatCategories = (items, depth = 0) => items.flatMap((c) =>
  [[c.id, `${"— ".repeat(depth)}${c.name}`], ...flatCategories(c.children || [], depth + 1)]);

function filterForm(state, categories, near) {
  const option = (value, label, current) => h("option", { value, selected: current === value }, label);
  return h("form", { class: "tt-filters", "aria-label": "Filters", onsubmit: (e) => {
    e.preventDefault();
    const data = new URLSearchParams([...new FormData(e.target)].filter(([, v]) => v !== ""));
    if (near) data.set("near", near);
    go(`#/events?${data}`);
  } },
    h("label", {}, "When", h("select", { name: "when" },
      Object.entries(windows).map(([key, label]) => option(key, label, state.when)))),
    h("label", {}, "Category", h("select", { name: "category" }, option("", "Any", state.category),
      flatCategories(categories).map(([id, name]) => option(id, name, state.category)))),
    h("label", {}, "Search", h("input", { name: "q", type: "search", value: state.q, placeholder: "Name, artist, venue" })),
    h("label", {}, "Budget (max price)", h("input", { name: "maxPrice", type: "number", min: 0, step: "any",
      inputmode: "decimal", value: state.maxPrice })),
    h("button", { type: "submit" }, "Show"));
}

/** #/events?when=&category=&maxPrice=: shows near me, nearest first when the position is known;
 * without one, in the city picked in Venues or the profile's home city. */
export async function eventsScreen() {
  const p = params();
  const state = { when: p.get("when") || "tonight", category: p.get("category") || "", maxPrice: p.get("maxPrice") || "", q: p.get("q") || "" };
  const near = p.get("near") || (await position());
  const city = near ? null : await locate().catch(() => null);
  // Tickets Tonight lists shows and parties; sports sessions belong to Playmate.
  const query = new URLSearchParams([["limit", "30"], ...TICKETED.map((kind) => ["kind", kind])]);
  const range = apiWhen(state.when);
  if (range) query.set("when", range);
  if (near) { query.set("near", near); query.set("radius", p.get("radius") || "25000"); query.set("sort", "distance"); }
  else if (city?.cityKey) query.set("city", city.cityKey);
  if (state.category) query.set("category", state.category);
  if (state.maxPrice) query.set("maxPrice", state.maxPrice);
  if (state.q) query.set("q", state.q);
  const [results, categories] = await Promise.all([
    pagedEvents(`/v1/events?${query}`, "Nothing found — try another day, category or budget."),
    api("GET", "/v1/categories")]);
  return [h("h1", {}, windows[state.when] || "Events"), subnav("events"),
    split(h("section", { "aria-label": "Results" }, results),
      [near ? null : emptyNote(city?.cityName ? `In ${city.cityName}. Allow location to see what is nearest first.`
        : "Allow location, or pick your city in Venues, to see what is near you."), filterForm(state, categories.items, near)], true)];
}

// #/event/<id>

/** When, on the venue's clock, and — when this device's clock differs — where the person is. */
function longWhen(event) {
  const mine = event.localTime && event.timeZone !== deviceZone() ? `Where you are: ${timeName(event.start)}` : null;
  return [eventWhen(event, true), mine];
}

async function placeName(id) {
  try { return (await api("GET", `/v1/places/${enc(id)}`)).name; } catch { return id; }
}

async function changeText(change, event) {
  const show = (v) => !v ? "not set" : /^\d{4}-\d{2}-\d{2}$/.test(v) ? dayName(v, event.timeZone) : timeName(v, event.timeZone);
  if (change.field === "place") {
    const [from, to] = await Promise.all([placeName(change.oldValue), placeName(change.newValue)]);
    return `Moved from ${from} to ${to}`;
  }
  if (change.field === "start") return `Rescheduled from ${show(change.oldValue)} to ${show(change.newValue)}`;
  return `${label(EVENT_STATUSES, change.newValue)} (was ${label(EVENT_STATUSES, change.oldValue || "scheduled").toLowerCase()})`;
}

async function changesSection(event) {
  if (!event.changes?.length) return null;
  const texts = await Promise.all(event.changes.map((c) => changeText(c, event)));
  return h("section", { class: "card tt-changes", "aria-label": "Changes" }, h("h2", {}, "Changes"),
    h("ul", {}, event.changes.map((c, i) => h("li", {}, texts[i],
      h("span", { class: "muted" }, ` — ${fromNow(c.changedAt)}`)))));
}

const statusLine = { going: "You're going.", following: "You follow this event.", interested: "You're interested." };

/** How many faces "Who's going" shows. */
const FACES = 8;

/** "Who's going": to someone going, the faces of the others they can meet there, from Pala's wall (the
 * API shows a wall only to people going, and on it only those whose preferences fit theirs), with a
 * link to it; to anyone else, what going would show. `show(status, counts)` redraws it. */
function whoIsGoing(event) {
  const box = h("section", { class: "card tt-going", "aria-label": "Who's going" }, h("h2", {}, "Who's going"));
  let latest = 0;
  const show = async (status, counts) => {
    const mine = ++latest;
    const going = status === "going" && session.isMember;
    const wall = going ? await api("GET", `/v1/events/${enc(event.id)}/wall?limit=${FACES}`).catch(() => ({ items: [] })) : null;
    if (mine !== latest) return;
    const others = wall?.items || [];
    const more = wall?.nextCursor ? h("li", { class: "tt-more muted" }, "and more") : null;
    box.replaceChildren(box.firstChild,
      others.length ? h("ul", { class: "tt-faces", "aria-label": "People going" }, others.map(({ user }) =>
        h("li", { title: shownName(user) }, avatar(user), h("span", { class: "visually-hidden" }, shownName(user)))), more) : null,
      h("p", { class: "muted" }, going ? (others.length ? "Like them on Pala's wall: a like both ways is a match and a chat."
        : "No one to meet here yet. Look again closer to the day.")
        : counts.going ? `${counts.going === 1 ? "1 person is" : `${counts.going} people are`} going. Say you're going too to see who, and meet them on Pala.`
          : "No one has said they're going yet."),
      going ? h("p", {}, h("a", { href: `#/wall/${enc(event.id)}`, class: "button secondary-link" }, "Meet them on Pala")) : null);
  };
  return { box, show };
}
/** Going and Follow as toggle buttons on the caller's attendance; pressing the active one undoes it;
 * `changed(status, counts)` hears each change (and the first state). */
function attendanceControls(event, changed = () => {}) {
  let current = event.myStatus || null;
  const line = h("p", { class: "muted", "aria-live": "polite" });
  const buttons = {};
  const draw = (counts) => {
    for (const [status, button] of Object.entries(buttons)) button.setAttribute("aria-pressed", String(current === status));
    line.textContent = `${statusLine[current] || ""} ${counts.going} going · ${counts.following + counts.interested} following`.trim();
    changed(current, counts);
  };
  const toggle = (status) => async () => {
    if (!requireMember()) return;
    const path = `/v1/events/${enc(event.id)}/attendance`;
    if (current === status) {
      await api("DELETE", path);
      current = null;
      draw((await api("GET", `/v1/events/${enc(event.id)}`)).counts);
    } else {
      const answer = await api("PUT", path, { status });
      current = answer.status;
      draw(answer.counts);
    }
  };
  buttons.going = actionButton("Going", toggle("going"), { class: "tt-toggle" });
  buttons.following = actionButton("Follow", toggle("following"), { class: "tt-toggle" });
  draw(event.counts);
  return h("div", { class: "tt-attend" }, h("div", { class: "tt-row" }, buttons.going, buttons.following), line);
}

const external = (href, label, cls) => h("a", { href, rel: "noopener", target: "_blank", class: cls }, label);

/** #/event/<id>: everything about one event. */
export async function eventScreen(id) {
  const event = await api("GET", `/v1/events/${enc(id)}`);
  // A session always opens in Playmate's screen, with its seats, whatever linked to it.
  if (event.kind === "session") { location.replace(`#/session/${enc(id)}`); return []; }
  const { place } = event;
  const [local, mine] = longWhen(event);
  const address = [place.address?.street, place.address?.city].filter(Boolean).join(", ");
  const image = eventImage(event);
  const going = whoIsGoing(event);
  // The event, and beside it on a wide screen (below on a phone) where it is and who's going.
  const [changes, map] = await Promise.all([changesSection(event), import("./map.js").then((m) => m.placeMap(place))]);
  return [subnav(""), split([image ? h("img", { src: image, alt: "", class: "tt-hero" }) : null,
    h("h1", {}, event.name, " ", statusBadge(event)),
    event.performers.length ? h("p", { class: "tt-artists" }, "With ", artistLinks(event.performers)) : null,
    changes,
    h("dl", { class: "tt-facts" },
      h("dt", {}, "When"), h("dd", {}, local, mine ? h("div", { class: "muted" }, mine) : null),
      h("dt", {}, "Where"), h("dd", {}, place.name, address ? h("div", { class: "muted" }, address) : null,
        place.distanceMeters != null ? h("div", { class: "muted" }, `${distance(place.distanceMeters)} away`) : null),
      h("dt", {}, "Price"), h("dd", {}, price(event) ? `${price(event)}${event.currency ? ` (${event.currency})` : ""}` : "Not announced"),
      event.category ? [h("dt", {}, "Category"), h("dd", {}, event.category.name)] : null),
    event.description ? h("p", {}, event.description) : null,
    event.ticketURL ? h("p", {}, external(event.ticketURL, "Buy tickets", "button")) : null,
    attendanceControls(event, going.show)], [map,
    h("p", { class: "tt-row" }, external(place.appleMapsURL, "Open in Apple Maps", "button secondary-link"),
      external(place.googleMapsURL, "Open in Google Maps", "button secondary-link")), going.box])];
}

// #/artists, #/artist/<id>

function artistItem(artist) {
  const facts = [artist.category?.name, artist.upcomingCount ? `${artist.upcomingCount} upcoming` : "no upcoming shows"]
    .filter(Boolean).join(" · ");
  return h("li", {}, h("a", { href: `#/artist/${enc(artist.id)}`, class: "card tt-artist" },
    h("strong", {}, artist.name), h("span", { class: "muted" }, facts)));
}

/** #/artists?q=: search as you type (any word's prefix), or browse a category. */
export async function artistsScreen() {
  const results = h("ul", { class: "list tt-results", "aria-live": "polite", "aria-label": "Artists found" });
  const note = h("p", { class: "muted", role: "status" });
  let timer = 0;
  let latest = 0;
  const show = async (path, q) => {
    const ticket = ++latest;
    try {
      const page = await api("GET", path);
      if (ticket !== latest) return;
      results.replaceChildren(...page.items.map(artistItem));
      note.textContent = page.items.length ? "" : q ? `No artist matches “${q}”.` : "No artists here yet.";
    } catch (error) { if (ticket === latest) note.textContent = error.message; }
  };
  const search = (q) => {
    history.replaceState(null, "", q ? `#/artists?q=${enc(q)}` : "#/artists");
    if (!q) { latest++; results.replaceChildren(); note.textContent = ""; return; }
    show(`/v1/artists/suggest?q=${enc(q)}&limit=20`, q);
  };
  const input = h("input", { type: "search", name: "q", autocomplete: "off", placeholder: "Artist name",
    value: params().get("q") || "",
    oninput: (e) => { clearTimeout(timer); timer = setTimeout(() => search(e.target.value.trim()), 150); },
    onkeydown: (e) => { if (e.key === "ArrowDown") { e.preventDefault(); results.querySelector("a")?.focus(); } } });
  onLeave(() => clearTimeout(timer));
  const categories = (await api("GET", "/v1/categories")).items;
  const browse = h("select", { name: "category", onchange: (e) => {
    if (e.target.value) show(`/v1/artists?category=${enc(e.target.value)}&limit=50`, "");
  } }, h("option", { value: "" }, "Choose…"), flatCategories(categories).map(([id, name]) => h("option", { value: id }, name)));
  if (input.value) search(input.value.trim());
  return [h("h1", {}, "Artists"), subnav("artists"),
    h("form", { role: "search", "aria-label": "Artist search", onsubmit: (e) => { e.preventDefault(); search(input.value.trim()); } },
      h("label", {}, "Search artists", input),
      h("label", {}, "Or browse a category", browse)),
    note, results];
}

/** The Favourite / Unfavourite toggle of one artist. */
function favouriteButton(artist) {
  let on = !!artist.isFavorite;
  const button = actionButton("", async () => {
    if (!requireMember()) return;
    await api(on ? "DELETE" : "PUT", `/v1/me/favorites/artists/${enc(artist.id)}`);
    on = !on;
    draw();
    toast(on ? `${artist.name} is a favourite` : `${artist.name} removed from favourites`);
  }, { class: "tt-toggle" });
  const draw = () => { button.textContent = on ? "Unfavourite" : "Favourite"; button.setAttribute("aria-pressed", String(on)); };
  draw();
  return button;
}

/** #/artist/<id>: name, category, favourite toggle, upcoming events and similar artists. */
export async function artistScreen(id) {
  const { artist, upcomingEvents, similar } = await api("GET", `/v1/artists/${enc(id)}`);
  const fans = plural(artist.favoritesCount, "fan");
  return [subnav("artists"), h("h1", {}, artist.name),
    artist.imageURL ? h("img", { src: artist.imageURL, alt: "", class: "tt-photo" }) : null,
    h("p", { class: "muted" }, [artist.category?.name, fans].filter(Boolean).join(" · ")),
    h("p", { class: "tt-row" }, favouriteButton(artist), artist.url ? external(artist.url, "Artist page") : null),
    h("h2", {}, "Upcoming events"), eventList(upcomingEvents, "No upcoming events."),
    h("h2", {}, "Similar artists"),
    similar.length ? h("ul", { class: "list tt-similar" }, similar.map((s) => h("li", {},
      h("a", { href: `#/artist/${enc(s.artist.id)}` }, s.artist.name),
      h("span", { class: "muted" }, ` ${Math.round(s.score * 100)}% match`)))) : emptyNote("None known yet.")];
}

// #/favorites

const memberOnly = (title, current, text) => [h("h1", {}, title), subnav(current),
  h("p", {}, h("a", { href: "#/start" }, "Sign up"), ` ${text}`)];

function favouriteRow(artist) {
  const row = h("li", { class: "card tt-fav" }, h("a", { href: `#/artist/${enc(artist.id)}` }, artist.name),
    actionButton("Remove", async () => {
      await api("DELETE", `/v1/me/favorites/artists/${enc(artist.id)}`);
      row.remove();
      toast(`${artist.name} removed from favourites`);
    }, { class: "secondary", "aria-label": `Remove ${artist.name}` }));
  return row;
}

/** #/favorites: my favourite artists, their upcoming events by date, and the events I follow. */
export async function favoritesScreen() {
  if (!session.isMember) return memberOnly("Favourites", "favorites", "to keep favourite artists and follow events.");
  const [artists, feed, mine] = await Promise.all([
    api("GET", "/v1/me/favorites/artists?limit=100"),
    pagedEvents("/v1/me/feed/favorites?limit=20", "No upcoming events by your favourites."),
    pagedEvents(`/v1/me/events?limit=20&${TICKETED_QUERY}`, "You don't follow any event yet.")]);
  return [h("h1", {}, "Favourites"), subnav("favorites"),
    h("section", { "aria-labelledby": "tt-fav-artists" }, h("h2", { id: "tt-fav-artists" }, "Favourite artists"),
      artists.items.length ? h("ul", { class: "list" }, artists.items.map(favouriteRow))
        : h("p", { class: "muted" }, "None yet — ", h("a", { href: "#/artists" }, "find artists"), ".")),
    h("section", { "aria-labelledby": "tt-fav-events" }, h("h2", { id: "tt-fav-events" }, "Favourites' events"), feed),
    h("section", { "aria-labelledby": "tt-my-events" }, h("h2", { id: "tt-my-events" }, "Events I follow"), mine)];
}

// #/explore

/** Drags `card` sideways with the pointer; past the threshold it calls `decide("left" | "right")`. */
function swipeable(card, decide) {
  let startX = null;
  let dx = 0;
  const reset = () => { card.style.transform = ""; card.classList.remove("tt-dragging"); startX = null; dx = 0; };
  card.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || e.target.closest("a, button")) return;
    startX = e.clientX;
    card.setPointerCapture(e.pointerId);
    card.classList.add("tt-dragging");
  });
  card.addEventListener("pointermove", (e) => {
    if (startX == null) return;
    dx = e.clientX - startX;
    card.style.transform = `translateX(${dx}px) rotate(${dx / 30}deg)`;
  });
  card.addEventListener("pointerup", () => {
    if (startX == null) return;
    const side = dx <= -90 ? "left" : dx >= 90 ? "right" : null;
    if (!side) return reset();
    card.classList.remove("tt-dragging");
    if (reducedMotion()) return decide(side);
    card.classList.add("tt-fling");
    card.style.transform = `translateX(${side === "left" ? -150 : 150}%) rotate(${side === "left" ? -20 : 20}deg)`;
    setTimeout(() => decide(side), 200);
  });
  card.addEventListener("pointercancel", reset);
}

function exploreCard(item, actions) {
  const { event } = item;
  const card = h("article", { class: "card tt-card", "aria-labelledby": "tt-card-title" },
    eventImage(event) ? h("img", { src: eventImage(event), alt: "", class: "tt-hero" }) : null,
    h("p", { class: "tt-reason" }, item.reason),
    h("h2", { id: "tt-card-title" }, h("a", { href: `#/event/${enc(event.id)}` }, event.name)),
    event.performers.length ? h("p", { class: "tt-artists" }, artistLinks(event.performers)) : null,
    h("p", {}, eventWhen(event)),
    h("p", { class: "muted" }, [event.place.name, distance(event.distanceMeters), price(event)].filter(Boolean).join(" · ")),
    h("div", { class: "tt-row tt-choices" },
      actionButton("Not for me", actions.dismiss, { class: "secondary" }),
      actionButton("Interested", actions.interested)));
  swipeable(card, (side) => (side === "left" ? actions.dismiss : actions.interested)()
    .catch((error) => { toast(error.message); card.style.transform = ""; card.classList.remove("tt-fling"); }));
  return card;
}

/** #/explore: one card at a time; "Not for me" (or swipe left) dismisses, "Interested" (or right) follows. */
export async function exploreScreen() {
  if (!session.isMember) return memberOnly("Explore", "explore", "and favourite artists to get cards for similar shows.");
  const stage = h("div", { class: "tt-stage" });
  const status = h("p", { class: "muted", role: "status" });
  const hint = h("p", { class: "muted" });
  const near = await position();
  let cards = [];
  const load = async (refresh) => {
    const query = new URLSearchParams({ limit: "50" });
    if (near) query.set("near", near);
    if (refresh) query.set("refresh", "true");
    const answer = await api("GET", `/v1/me/recommendations/events?${query}`);
    cards = answer.items;
    hint.replaceChildren(...(answer.coldStart ? ["Popular nearby tonight. ",
      h("a", { href: "#/artists" }, "Favourite artists"), " to get shows by similar ones."] : []));
    draw();
  };
  const next = () => { cards.shift(); draw(); };
  const dismiss = async () => {
    await api("POST", "/v1/me/recommendations/dismissals", { eventId: cards[0].event.id });
    next();
  };
  const interested = async () => {
    const { name, id } = cards[0].event;
    await api("PUT", `/v1/events/${enc(id)}/attendance`, { status: "following" });
    toast(`Following ${name}`);
    next();
  };
  const draw = () => {
    if (!cards.length) {
      status.textContent = "No more cards.";
      stage.replaceChildren(h("div", { class: "card tt-empty" },
        h("p", {}, "That's all for now. Refresh to see the ones you passed on again, or ",
          h("a", { href: "#/artists" }, "favourite more artists"), "."),
        actionButton("Refresh", () => load(true))));
      return;
    }
    status.textContent = `${plural(cards.length, "card")} left.`;
    stage.replaceChildren(exploreCard(cards[0], { dismiss, interested }));
  };
  await load(false);
  return [h("h1", {}, "Explore"), subnav("explore"), hint, status, stage];
}

export const routes = {
  "events": eventsScreen, "event": eventScreen, "artists": artistsScreen, "artist": artistScreen,
  "favorites": favoritesScreen, "explore": exploreScreen,
};
