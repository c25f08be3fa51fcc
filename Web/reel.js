// The reel: a paged feed of clips as full-screen pages that snap, one clip per screen. The clip on
// screen plays muted (tap it or "Sound" for sound; with reduced motion a Play button instead), the
// next clip preloads, the next page loads at the last-but-one clip, and the clip on screen is kept
// in the hash (`?at=<postId>`), so that Back comes back to it, the pages before it loaded again.
// PartyUP's feeds and the dance feeds use it; it and reel.css load with the first reel.
import { api, pagePath } from "./api.js";
import { h, toast, errorText, split, wide } from "./ui.js";
import { onLeave, params } from "./router.js";

const PAGE_SIZE = 10;
/** At most this many pages are loaded to find the clip to come back to. */
const RESTORE_PAGES = 20;
const still = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

let styles;
/** reel.css, added once; resolves when it applies (or failed to load: the reel still works). */
function loadStyles() {
  styles ??= new Promise((done) => document.head.append(h("link", { rel: "stylesheet", href: "/app/reel.css", onload: done, onerror: done })));
  return styles;
}

/** The current hash with its `at` parameter set to `id`, or without it. */
function hashAt(id) {
  const [path, query = ""] = location.hash.split("?");
  const search = new URLSearchParams(query);
  if (id) search.set("at", id); else search.delete("at");
  const rest = search.toString();
  return rest ? `${path}?${rest}` : path;
}

/** A clip's video (muted, looping, loading nothing until it is next), photo, or a placeholder. */
function media(post, label) {
  const { kind, url, posterUrl } = post.media || {};
  if (kind === "image" && url) return h("img", { class: "reel-media", src: url, alt: post.caption || "Photo", loading: "lazy" });
  if (kind !== "video" || !url) return h("div", { class: "reel-media reel-pending" }, "Processing…");
  return h("video", { class: "reel-media", src: url, poster: posterUrl, playsinline: true, "webkit-playsinline": true,
    loop: true, muted: true, preload: "none", "aria-label": `${label} (tap for sound)` });
}

/**
 * A reel of the feed at `path` (a FeedPage, paged with `cursor`), resolved once its first page is
 * in (or, coming back, every page up to the clip in `?at=`). `describe(post)` answers the clip's
 * name and what its shade shows (`{ label, info }`); `ads(page, clips)` may put the page's ads
 * among its clips. `head` is shown over the top of the reel (a full screen's title and links),
 * `empty` when the feed has nothing; `box` makes it a box in a page (no position in the hash).
 * On a wide screen, `aside(post)` answers (nodes, or a promise of them) what stands beside the reel
 * about the clip on screen — its venue, its comments — following it as the reel scrolls (null when
 * the feed is empty), the reel and it in two columns (split in ui.js).
 */
export async function reel(path, describe, { head = [], empty = null, ads = null, box = false, aside = null } = {}) {
  const remember = !box;
  const target = remember ? params().get("at") : null;
  const base = hashAt(null);
  const state = { cursor: undefined, done: false, busy: null, sound: false, current: null, started: false };
  const feed = h("div", { class: "reel", role: "feed", "aria-label": "Clips", tabindex: "0" });
  const views = new Set();
  const pending = [];
  const posts = new Map(); // id → the clip, for the side

  // The side of a wide screen: what `aside` says about the clip on screen, once the reel rests on it
  // (a quick scroll past clips asks nothing); the same nodes again (the same venue) stay as they are.
  const side = aside && !box && wide() ? h("section", { class: "reel-aside", "aria-label": "About the clip on screen" }) : null;
  let sideFor, sideTimer = 0;
  const follow = (post) => {
    if (!side || sideFor === post) return;
    sideFor = post;
    clearTimeout(sideTimer);
    sideTimer = setTimeout(async () => {
      let nodes;
      try { nodes = [await aside(post)].flat(Infinity).filter((node) => node != null && node !== false); }
      catch (error) { nodes = [h("p", { class: "error" }, errorText(error))]; }
      const same = nodes.length === side.childNodes.length && nodes.every((node, i) => node === side.childNodes[i]);
      if (sideFor === post && !same) side.replaceChildren(...nodes);
    }, side.childNodes.length ? 250 : 0);
  };

  const sound = h("button", { type: "button", class: "secondary reel-sound", "aria-pressed": "false",
    onclick: () => setSound(!state.sound) }, "Sound");
  const setSound = (on) => {
    state.sound = on;
    sound.setAttribute("aria-pressed", String(on));
    for (const video of feed.querySelectorAll("video")) video.muted = !on;
  };
  const play = (video) => video.play().catch(() => video.parentElement.classList.add("paused"));

  const clipPage = (post) => {
    posts.set(post.id, post);
    const { label, info } = describe(post);
    const visual = media(post, label);
    const page = h("article", { class: "reel-page", "aria-label": label, "data-id": post.id }, visual, h("div", { class: "reel-info" }, info));
    if (visual.tagName === "VIDEO") {
      visual.muted = !state.sound;
      visual.addEventListener("click", () => visual.paused ? play(visual) : setSound(!state.sound));
      visual.addEventListener("play", () => page.classList.remove("paused"));
      visual.addEventListener("pause", () => page.classList.add("paused"));
      page.append(h("button", { type: "button", class: "reel-play", onclick: () => play(visual) },
        h("span", { "aria-hidden": "true" }, "▶ "), "Play"));
    }
    return page;
  };

  // The clip that fills the screen plays (unless motion is reduced) and loads; the next clip with a
  // video preloads once this one can play (not to slow it down), the rest load nothing; the next
  // page comes at the last-but-one page.
  const show = (page) => {
    state.current?.classList.remove("current");
    state.current = page;
    page.classList.add("current");
    const pages = [...feed.children];
    const index = pages.indexOf(page);
    const video = page.querySelector("video");
    const next = pages.slice(index + 1).map((p) => p.querySelector("video")).find(Boolean);
    for (const other of feed.querySelectorAll("video")) other.preload = other === video ? "auto" : "none";
    const preloadNext = () => { if (next && state.current === page) next.preload = "auto"; };
    if (!video || video.readyState >= 3) preloadNext(); else video.addEventListener("canplay", preloadNext, { once: true });
    if (video && still()) page.classList.add("paused");
    else if (video) { video.muted = !state.sound; play(video); }
    const id = page.dataset.id;
    if (id && !views.has(id)) { views.add(id); pending.push(id); }
    if (id) follow(posts.get(id));
    if (remember && id && hashAt(null) === base) history.replaceState(history.state, "", hashAt(index ? id : null));
    if (index >= pages.length - 2) more().catch((error) => toast(errorText(error)));
  };
  const seen = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) show(entry.target);
      else entry.target.querySelector("video")?.pause();
    }
  }, { root: feed, threshold: 0.6 });

  /** Loads the next page (once at a time) and adds its clips and ads. */
  const more = () => {
    if (state.done) return Promise.resolve();
    state.busy ??= (async () => {
      feed.setAttribute("aria-busy", "true");
      try {
        const page = await api("GET", pagePath(path, { limit: PAGE_SIZE, cursor: state.cursor }));
        const clips = page.items.map(clipPage);
        const nodes = ads ? ads(page, clips) : clips;
        feed.append(...nodes);
        if (state.started) nodes.forEach((node) => seen.observe(node));
        state.cursor = page.nextCursor;
        state.done = !page.nextCursor;
      } finally {
        feed.removeAttribute("aria-busy");
        state.busy = null;
      }
    })();
    return state.busy;
  };
  const find = (id) => [...feed.children].find((page) => page.dataset.id === id);

  await Promise.all([loadStyles(), more()]);
  for (let n = 1; target && !find(target) && !state.done && n < RESTORE_PAGES; n++) await more();

  // Once on the page: back at the clip of `?at=`, then playing what is on screen.
  const placed = new ResizeObserver(() => {
    if (!feed.clientHeight) return;
    placed.disconnect();
    const at = target && find(target);
    if (at) feed.scrollTop = at.offsetTop;
    state.started = true;
    for (const page of feed.children) seen.observe(page);
  });
  placed.observe(feed);

  const flush = () => { if (pending.length) api("POST", "/v1/posts/views", { postIds: pending.splice(0, 100) }).catch(() => {}); };
  const timer = setInterval(flush, 5000);
  // Leaving: stop at once; free the videos' buffers a moment later, off the next screen's way.
  onLeave(() => {
    placed.disconnect(); seen.disconnect(); clearInterval(timer); clearTimeout(sideTimer); flush();
    const videos = [...feed.querySelectorAll("video")];
    for (const video of videos) video.pause();
    setTimeout(() => { for (const video of videos) { video.removeAttribute("src"); video.load(); } }, 1000);
  });
  const screen = h("div", { class: `reel-screen ${box ? "reel-box" : "reel-full"}` },
    h("div", { class: "reel-head" }, h("div", { class: "reel-title" }, head), sound),
    feed.children.length ? feed : h("div", { class: "reel reel-empty" }, h("div", {}, empty)));
  if (!side) return screen;
  if (!feed.children.length) follow(null);
  return split(screen, side);
}
