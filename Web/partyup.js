// PartyUP: the city hub (venues near you, promoted ones first) and the clip feeds — a venue's,
// the city's pregame (posts without a venue) and all of the city's — as full-screen reels
// (Web/reel.js): one clip per screen, vote up / meh / down and report on its shade, and the feed
// page's ads (style 0 their own page, 1 an overlay). Posting lives in post.js, loaded only when
// the "post" screen opens so the first load stays small.
import { api, session } from "./api.js";
import { h, toast, requireMember, actionButton, split, wide } from "./ui.js";
import { go } from "./router.js";
import { locate, pickCity, forgetCity } from "./city.js";
import { enc, plural, distance, ago } from "./format.js";

// city hub

/** A form to pick another city by name (or go back to the position's city). */
function cityPicker(where) {
  const results = h("ul", { class: "list pu-cities" });
  const form = h("form", { class: "pu-city", "aria-label": "Change city", onsubmit: async (event) => {
    event.preventDefault();
    const q = new FormData(form).get("q").trim();
    const found = q ? (await api("GET", `/v1/geocode?q=${enc(q)}&limit=5`)).items : [];
    results.replaceChildren(...(found.length ? found.map((city) => h("li", {}, h("button", { type: "button", class: "secondary",
      onclick: () => { pickCity(city.key); go("#/hub"); } }, `${city.name}, ${city.region} (${city.countryCode})`)))
      : [h("li", { class: "muted" }, "No city by that name.")]));
  } }, h("label", {}, "City", h("input", { name: "q", type: "search", placeholder: where.cityName || "Berlin" })),
    h("button", { type: "submit", class: "secondary" }, "Find"),
    where.picked ? h("button", { type: "button", class: "secondary",
      onclick: () => { forgetCity(); go("#/hub"); } }, "Use my location") : null);
  return h("details", { class: "pu-change", open: !where.cityKey }, h("summary", {}, "Change city"), form, results);
}

/** One venue of the hub: poster of its newest clip, name, tagline, liveness and distance. */
function hubVenue(item) {
  const { place } = item;
  const facts = [item.clips ? plural(item.clips, "clip") : "no clips yet",
    item.votes ? plural(item.votes, "vote") : null,
    item.latestPostAt ? `newest ${ago(item.latestPostAt)}` : null,
    distance(place.distanceMeters) || null, place.openState === "open" ? "open now" : null].filter(Boolean);
  return h("li", { class: `card pu-venue${item.highlighted ? " pu-highlighted" : ""}` },
    h("a", { href: `#/venue/${enc(place.id)}` },
      item.latestPosterUrl ? h("img", { src: item.latestPosterUrl, alt: "", loading: "lazy" }) : h("span", { class: "pu-noposter" }),
      h("span", {}, h("strong", {}, place.name),
        item.highlighted ? h("span", { class: "badge" }, "Featured") : null,
        item.tagline ? h("span", { class: "pu-tagline" }, item.tagline) : null,
        h("span", { class: "muted" }, facts.join(" · ")))));
}

async function hubScreen() {
  const where = await locate();
  const title = h("h1", {}, where.cityName ? `Tonight in ${where.cityName}` : "Venues");
  const links = h("p", { class: "pu-links" }, h("a", { href: "#/pregame", class: "button" }, "Pregame"), " ",
    h("a", { href: "#/all", class: "button" }, "All clips"), " ", h("a", { href: "#/post", class: "button" }, "Post a clip"));
  if (!where.cityKey) return [title, h("p", {}, "We don't know where you are. Pick a city:"), cityPicker(where)];
  const list = h("ul", { class: "list pu-hub", "aria-label": "Venues" });
  const more = h("p", {});
  const load = async (cursor) => {
    const query = new URLSearchParams({ limit: "30", group: "nightlife" });
    if (where.near) query.set("near", where.near);
    if (cursor) query.set("cursor", cursor);
    const page = await api("GET", `/v1/cities/${enc(where.cityKey)}/hub?${query}`);
    list.append(...page.items.map(hubVenue));
    if (!list.children.length) list.append(h("li", { class: "muted" }, "No venues here yet."));
    more.replaceChildren(page.nextCursor ? actionButton("More venues", () => load(page.nextCursor), { class: "secondary" }) : "");
  };
  // Wide screens play the city's clips beside the venues.
  const [side] = await Promise.all([wide() ? feed(`/v1/cities/${enc(where.cityKey)}/posts?scope=all`,
    { empty: h("p", {}, "Nothing posted yet tonight."), showPlace: true, box: true }).catch(() => null) : null, load()]);
  return [title, links, cityPicker(where), split([list, more], side && [h("h2", {}, "All clips"), side])];
}

// the clip feeds

const IMAGE = /^\/v1\/media\/.*\.(jpe?g|png)(\?|$)/i;

/** An ad's creative: an uploaded image, or a page (ours or the advertiser's) in a sandboxed frame
 * (no scripts, no forms; the page's CSP loads images from our own media only). */
function adMedia(ad) {
  return IMAGE.test(ad.mediaUrl) ? h("img", { src: ad.mediaUrl, alt: "Advertisement" })
    : h("iframe", { src: ad.mediaUrl, title: "Advertisement", sandbox: "", loading: "lazy", referrerpolicy: "no-referrer" });
}

/** Vote and report controls; authors see them disabled (the API refuses votes on one's own clips). */
function controls(post) {
  const mine = post.author?.id && post.author.id === session.user?.id;
  const count = { 1: h("span", { class: "pu-count" }, String(post.up)), [-1]: h("span", { class: "pu-count" }, String(post.down)) };
  const buttons = {};
  const show = (state) => {
    count[1].textContent = String(state.up);
    count[-1].textContent = String(state.down);
    for (const [value, button] of Object.entries(buttons)) button.setAttribute("aria-pressed", String(state.value === Number(value)));
  };
  const vote = (value) => async () => {
    if (!requireMember()) return;
    const state = await api("PUT", `/v1/posts/${enc(post.id)}/vote`, { value });
    show(state);
  };
  for (const [value, icon, label] of [[1, "▲", "Up"], [0, "●", "Meh"], [-1, "▼", "Down"]]) {
    buttons[value] = actionButton([h("span", { "aria-hidden": "true" }, icon), ` ${label} `, count[value] || ""], vote(value),
      { class: "pu-vote", "aria-pressed": String(post.myVote === value), disabled: mine, title: mine ? "Your clip" : false });
  }
  let flagged = !!post.flaggedByMe;
  const report = actionButton(flagged ? "Reported" : "Report", async () => {
    if (!requireMember()) return;
    await api(flagged ? "DELETE" : "PUT", `/v1/posts/${enc(post.id)}/flag`);
    flagged = !flagged;
    report.textContent = flagged ? "Reported" : "Report";
    report.setAttribute("aria-pressed", String(flagged));
    toast(flagged ? "Reported — thanks, a moderator will look." : "Report taken back.");
  }, { class: "secondary pu-flag", "aria-pressed": String(flagged), disabled: mine });
  return h("div", { class: "pu-controls", role: "group", "aria-label": "Vote" }, buttons[1], buttons[0], buttons[-1], report);
}

/** What a clip's shade shows: author, age, venue, caption, song, tags and the vote controls. */
function describe(post, showPlace) {
  const mine = post.author?.id && post.author.id === session.user?.id;
  const who = mine ? "You" : post.author?.username ? `@${post.author.username}` : post.source?.name || "A partier";
  const song = post.song ? h("p", { class: "pu-song" }, "♪ ", post.song.url
    ? h("a", { href: post.song.url, target: "_blank", rel: "noopener" }, [post.song.title, post.song.artist].filter(Boolean).join(" — "))
    : [post.song.title, post.song.artist].filter(Boolean).join(" — ")) : null;
  return { label: `Clip by ${who}${post.caption ? `: ${post.caption}` : ""}`, info: [
    h("p", {}, h("strong", {}, who), " ", h("span", { class: "muted" }, ago(post.createdAt)),
      post.placeName && showPlace ? [" at ", h("a", { href: `#/venue/${enc(post.placeId)}` }, post.placeName)] : null),
    post.caption ? h("p", { class: "reel-caption" }, post.caption) : null, song,
    post.tags.length ? h("p", { class: "muted" }, post.tags.map((t) => `#${t}`).join(" ")) : null,
    controls(post)] };
}

/** The page's ads among its clips: style 0 a page of its own after them, 1 an overlay on the first. */
function withAds(page, clips) {
  const pages = [...clips];
  for (const ad of page.ads || []) {
    if (ad.style === 1 && clips[0]) clips[0].append(h("aside", { class: "pu-adlay", "aria-label": "Advertisement" }, adMedia(ad),
      h("button", { type: "button", class: "secondary", onclick: (e) => e.target.parentElement.remove() }, "Hide ad")));
    else pages.push(h("article", { class: "reel-page pu-ad", "aria-label": "Advertisement" }, adMedia(ad), h("span", { class: "pu-adtag" }, "Ad")));
  }
  return pages;
}

/** The reel module; a screen asks for it early, while it waits for its own data. */
const reelModule = () => import("./reel.js");

/**
 * The clips of the feed at `path` as a reel (Web/reel.js, loaded with the first feed): full screen
 * under `head`, or a box in a page with `box`; `empty` when there is nothing.
 */
async function feed(path, { head, empty, showPlace = false, box = false, aside = null }) {
  const { reel } = await reelModule();
  return reel(path, (post) => describe(post, showPlace), { head, empty, box, ads: withAds, aside });
}

/** Beside a reel on a wide screen: the venue `place` — where it is, how far, its map and links to
 * its feed (unless `here`, its own screen) and to directions. The same nodes for the same venue. */
function venueSide(place, here = false) {
  const address = [place.address?.street, place.address?.city].filter(Boolean).join(", ");
  const facts = [distance(place.distanceMeters) && `${distance(place.distanceMeters)} away`, place.openState === "open" ? "open now" : null]
    .filter(Boolean).join(" · ");
  const map = h("div", { class: "pu-sidemap" });
  import("./map.js").then((m) => m.placeMap(place)).then((box) => map.replaceChildren(box || ""), () => {});
  return [h("h2", {}, here ? place.name : h("a", { href: `#/venue/${enc(place.id)}` }, place.name)),
    address ? h("p", { class: "muted" }, address) : null, facts ? h("p", { class: "muted" }, facts) : null, map,
    h("p", { class: "links" }, here ? null : [h("a", { href: `#/venue/${enc(place.id)}` }, "Clips from here"), " · "],
      h("a", { href: place.googleMapsURL, target: "_blank", rel: "noopener" }, "Directions"))];
}

/** The side of a city feed: the venue of the clip on screen (fetched once per venue), or a word on
 * pregame clips, which have none. */
function clipVenue() {
  const venues = new Map();
  return (post) => {
    if (!post) return h("p", { class: "muted" }, "The venue of the clip on screen shows here, with its map.");
    if (!post.placeId) return [h("h2", {}, "Pregame"), h("p", { class: "muted" }, "Posted on the way out, before any venue.")];
    if (!venues.has(post.placeId)) venues.set(post.placeId, api("GET", `/v1/places/${enc(post.placeId)}`).then((place) => venueSide(place),
      (error) => { venues.delete(post.placeId); throw error; }));
    return venues.get(post.placeId);
  };
}

/** A reel screen's title row and its links (as chips that scroll sideways when they do not fit). */
const reelHead = (title, ...links) => [h("div", { class: "reel-top" }, h("h1", {}, title)), h("div", { class: "reel-chips" }, links)];

/** The venue's map, drawn when first opened (map.js and Leaflet load then). */
function mapToggle(place) {
  if (!place.location) return [];
  const panel = h("div", { class: "reel-drop pu-map", id: "venue-map", hidden: true });
  let drawn = false;
  const button = h("button", { type: "button", "aria-expanded": "false", "aria-controls": "venue-map", onclick: async () => {
    panel.hidden = !panel.hidden;
    button.setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden && !drawn) {
      drawn = true;
      panel.append(await (await import("./map.js")).placeMap(place) || h("p", { class: "muted" }, "No map here — try Directions."));
    }
  } }, "Map");
  return [button, panel];
}

async function venueScreen(placeId) {
  const id = enc(placeId);
  const [place] = await Promise.all([api("GET", `/v1/places/${id}`), reelModule()]);
  const post = `#/post?place=${id}`;
  // A wide screen shows the venue and its map beside the reel; a phone opens the map from a chip.
  const side = wide() ? venueSide(place, true) : null;
  const [mapButton, mapPanel] = side ? [] : mapToggle(place);
  return feed(`/v1/places/${id}/posts`, { aside: side && (() => side),
    head: [...reelHead(place.name, h("a", { href: post, class: "button" }, "Post a clip here"),
      h("a", { href: place.googleMapsURL, target: "_blank", rel: "noopener" }, "Directions"), mapButton), mapPanel],
    empty: [h("p", {}, "No clips from the last hours."), h("a", { href: post }, "Show what it looks like right now")] });
}

/** The city's pregame (`scope=pregame`) or all (`scope=all`) feed. */
const cityScreen = (scope, title) => async () => {
  const [where] = await Promise.all([locate(), reelModule()]);
  if (!where.cityKey) return [h("h1", {}, title), h("p", {}, "Pick a city in ", h("a", { href: "#/hub" }, "Venues"), " first.")];
  return feed(`/v1/cities/${enc(where.cityKey)}/posts?scope=${scope}`, { showPlace: true, aside: clipVenue(),
    head: reelHead(`${title} · ${where.cityName}`, h("a", { href: "#/post", class: "button" }, "Post a clip"), h("a", { href: "#/hub" }, "Venues"),
      scope === "all" ? h("a", { href: "#/pregame" }, "Pregame") : h("a", { href: "#/all" }, "All clips")),
    empty: h("p", {}, "Nothing posted yet tonight. ", h("a", { href: "#/post" }, "Post the first clip")) });
};

/** The post screen is loaded on demand (post.js). */
const postScreen = async (...args) => (await import("./post.js")).routes.post(...args);

export const routes = { hub: hubScreen, venue: venueScreen, pregame: cityScreen("pregame", "Pregame"),
  all: cityScreen("all", "All clips"), post: postScreen };
