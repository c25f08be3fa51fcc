// PartyUP: the city hub (venues near you, promoted ones first) and the clip feeds — a venue's,
// the city's pregame (posts without a venue) and all of the city's — in one vertical player:
// one clip per screen, the visible one plays muted until tapped, vote up / meh / down, report,
// and the feed page's ads (style 0 their own page, 1 an overlay). Posting lives in post.js,
// loaded only when the "post" screen opens so the first load stays small.
import { api, session, pagePath } from "./api.js";
import { h, toast, requireMember, actionButton, split, wide } from "./ui.js";
import { go, onLeave } from "./router.js";
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
  const [side] = await Promise.all([wide() ? feed(page(`/v1/cities/${enc(where.cityKey)}/posts?scope=all`),
    h("p", {}, "Nothing posted yet tonight."), { showPlace: true }).catch(() => null) : null, load()]);
  return [title, links, cityPicker(where), split([list, more], side && [h("h2", {}, "All clips"), side])];
}

// the clip player

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

/** One clip page: the video (or photo) with its caption, author, song, tags, place and controls. */
function clipPage(post, player) {
  const { media } = post;
  const mine = post.author?.id && post.author.id === session.user?.id;
  const who = mine ? "You" : post.author?.username ? `@${post.author.username}` : post.source?.name || "A partier";
  const label = `Clip by ${who}${post.caption ? `: ${post.caption}` : ""}`;
  let visual;
  if (media.kind === "image") visual = h("img", { src: media.url, alt: post.caption || "Photo", loading: "lazy" });
  else {
    visual = h("video", { src: media.url, poster: media.posterUrl, playsinline: true, "webkit-playsinline": true,
      loop: true, muted: true, preload: "none", "aria-label": `${label} (tap for sound)`, onclick: player.toggleSound });
    visual.muted = !player.sound;
  }
  const sound = media.kind === "video" ? h("button", { type: "button", class: "secondary pu-sound", "aria-pressed": String(player.sound),
    onclick: player.toggleSound }, "Sound") : null;
  const song = post.song ? h("p", { class: "pu-song" }, "♪ ", post.song.url
    ? h("a", { href: post.song.url, target: "_blank", rel: "noopener" }, [post.song.title, post.song.artist].filter(Boolean).join(" — "))
    : [post.song.title, post.song.artist].filter(Boolean).join(" — ")) : null;
  return h("article", { class: "pu-clip", "aria-label": label, "data-id": post.id },
    visual,
    h("div", { class: "pu-info" },
      h("p", {}, h("strong", {}, who), " ", h("span", { class: "muted" }, ago(post.createdAt)),
        post.placeName && player.showPlace ? [" at ", h("a", { href: `#/venue/${enc(post.placeId)}` }, post.placeName)] : null),
      post.caption ? h("p", {}, post.caption) : null, song,
      post.tags.length ? h("p", { class: "muted" }, post.tags.map((t) => `#${t}`).join(" ")) : null,
      controls(post)),
    sound);
}

/**
 * A vertical clip player over a paged feed: `load(cursor)` answers a FeedPage. Plays the clip
 * that fills the screen, pauses the rest, loads the next page near the end and counts views.
 */
export function player(load, { showPlace = false } = {}) {
  const box = h("div", { class: "pu-reel", role: "feed", "aria-label": "Clips" });
  const end = h("div", { class: "pu-end", "aria-hidden": "true" });
  const state = { sound: false, showPlace, cursor: undefined, done: false, busy: false, count: 0 };
  const views = new Set();
  let pending = [];
  state.toggleSound = () => {
    state.sound = !state.sound;
    for (const video of box.querySelectorAll("video")) video.muted = !state.sound;
    for (const button of box.querySelectorAll(".pu-sound")) button.setAttribute("aria-pressed", String(state.sound));
  };
  const flush = () => { if (pending.length) api("POST", "/v1/posts/views", { postIds: pending.splice(0, 100) }).catch(() => {}); };
  const watch = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const video = entry.target.querySelector("video");
      if (entry.isIntersecting) {
        if (video) { video.preload = "auto"; video.muted = !state.sound; video.play().catch(() => {}); }
        const next = entry.target.nextElementSibling?.querySelector("video");
        if (next) next.preload = "metadata";
        const id = entry.target.dataset.id;
        if (id && !views.has(id)) { views.add(id); pending.push(id); }
      } else video?.pause();
    }
  }, { root: box, threshold: 0.6 });
  const nearEnd = new IntersectionObserver((entries) => { if (entries[0].isIntersecting) state.next(); }, { root: box, rootMargin: "0px 0px 200% 0px" });
  state.next = async () => {
    if (state.busy || state.done) return;
    state.busy = true;
    try {
      const page = await load(state.cursor);
      const pages = page.items.map((post) => clipPage(post, state));
      for (const ad of page.ads || []) {
        if (ad.style === 1 && pages[0]) pages[0].append(h("aside", { class: "pu-adlay", "aria-label": "Advertisement" }, adMedia(ad),
          h("button", { type: "button", class: "secondary", onclick: (e) => e.target.parentElement.remove() }, "Hide ad")));
        else pages.push(h("section", { class: "pu-clip pu-ad", "aria-label": "Advertisement" }, adMedia(ad), h("span", { class: "pu-adtag" }, "Ad")));
      }
      end.before(...pages);
      for (const node of pages) watch.observe(node);
      state.count += page.items.length;
      state.cursor = page.nextCursor;
      state.done = !page.nextCursor;
    } finally { state.busy = false; }
  };
  box.append(end);
  nearEnd.observe(end);
  const timer = setInterval(flush, 5000);
  onLeave(() => {
    watch.disconnect(); nearEnd.disconnect(); clearInterval(timer); flush();
    for (const video of box.querySelectorAll("video")) { video.pause(); video.removeAttribute("src"); video.load(); }
  });
  return { element: box, state };
}

/** Loads the first page and answers the player, or `empty` when the feed has nothing. */
async function feed(load, empty, options) {
  const { element, state } = player(load, options);
  await state.next();
  return state.count || element.querySelector(".pu-ad") ? element : h("div", { class: "card" }, empty);
}

const page = (path) => (cursor) => api("GET", pagePath(path, { limit: 10, cursor }));

async function venueScreen(placeId) {
  const id = enc(placeId);
  const place = await api("GET", `/v1/places/${id}`);
  const post = `#/post?place=${id}`;
  return [h("div", { class: "pu-head" }, h("h1", {}, place.name),
    h("p", { class: "pu-links" }, h("a", { href: post, class: "button" }, "Post a clip here"), " ",
      h("a", { href: place.googleMapsURL, target: "_blank", rel: "noopener" }, "Directions"))),
  await feed(page(`/v1/places/${id}/posts`),
    [h("p", {}, "No clips from the last hours."), h("a", { href: post }, "Show what it looks like right now")]),
  await (await import("./map.js")).placeMap(place)];
}

/** The city's pregame (`scope=pregame`) or all (`scope=all`) feed. */
const cityScreen = (scope, title) => async () => {
  const where = await locate();
  if (!where.cityKey) return [h("h1", {}, title), h("p", {}, "Pick a city in ", h("a", { href: "#/hub" }, "Venues"), " first.")];
  return [h("div", { class: "pu-head" }, h("h1", {}, `${title} · ${where.cityName}`),
    h("p", { class: "pu-links" }, h("a", { href: "#/post", class: "button" }, "Post a clip"), " ", h("a", { href: "#/hub" }, "Venues"), " ",
      scope === "all" ? h("a", { href: "#/pregame" }, "Pregame") : h("a", { href: "#/all" }, "All clips"))),
  await feed(page(`/v1/cities/${enc(where.cityKey)}/posts?scope=${scope}`),
    h("p", {}, "Nothing posted yet tonight. ", h("a", { href: "#/post" }, "Post the first clip")), { showPlace: true })];
};

/** The post screen is loaded on demand (post.js). */
const postScreen = async (...args) => (await import("./post.js")).routes.post(...args);

export const routes = { hub: hubScreen, venue: venueScreen, pregame: cityScreen("pregame", "Pregame"),
  all: cityScreen("all", "All clips"), post: postScreen };
