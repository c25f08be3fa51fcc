// The hash router: "#/name/arg1/arg2?query". Screens are functions (args…) → node(s), sync or async.
import { ApiError, session } from "./api.js";
import { h, errorText } from "./ui.js";

const routes = {};
/** Screens that someone signed out may open (besides "start"): the mailed links' among them. */
const signedOut = new Set();
let leaving = [];
let fallback = () => [];

/** Adds screens: `{ name: (arg…) => nodes }`. The "" route is home. Those named in `open` work
 * signed out; any other sends someone signed out through the start screen. */
export function register(screens, open = []) {
  Object.assign(routes, screens);
  for (const name of open) signedOut.add(name);
}

/** Runs `fn` when the current screen is left (stop players, sockets, timers). */
export function onLeave(fn) { leaving.push(fn); }

/** The current hash's query parameters. */
export function params() { return new URLSearchParams(location.hash.split("?")[1] || ""); }

/** Navigates to `hash`, re-rendering when it is already the current one. */
export function go(hash) { if (location.hash === hash) render(); else location.hash = hash; }

let renderNav = () => {};
/** Sets the function that draws the navigation after each render. */
export function setNav(fn) { renderNav = fn; }

/** A screen that has not answered within this many ms shows a skeleton meanwhile. */
const SKELETON_AFTER_MS = 30;
let generation = 0;
let shown = "";
let comeBack = "";

/** The start screen's link that brings the person back here after signing in or up. */
export function startLink() { return `#/start?next=${encodeURIComponent(location.hash || "#/")}`; }

/** The route of a hash: "#/event/1?x" → "event". */
export const routeOf = (hash) => hash.replace(/^#\/?/, "").split("?")[0].split("/")[0];

/** Where signing in or up leads: the screen the person came from (a deep link, a prompt), else
 * home; never back to the start screen or to a signed-out one (a used link, a sent form). */
export function returnTo() {
  const next = comeBack;
  comeBack = "";
  const route = next && routeOf(next);
  return next && route !== "start" && !signedOut.has(route) ? next : "#/";
}

function skeleton() {
  return h("div", { class: "skeleton", role: "status", "aria-label": "Loading" },
    h("div", { class: "skeleton-line wide" }), h("div", { class: "skeleton-card" }), h("div", { class: "skeleton-card" }));
}

export async function render() {
  for (const fn of leaving.splice(0)) { try { fn(); } catch { /* a cleanup never blocks navigation */ } }
  const mine = ++generation;
  const main = document.getElementById("main");
  const [route, ...rest] = location.hash.replace(/^#\/?/, "").split("?")[0].split("/");
  // Signed out, any screen goes through the start screen and comes back to it.
  if (!session.tokens && route !== "start" && !signedOut.has(route)) return go(startLink());
  if (route === "start") {
    const next = params().get("next");
    if (next?.startsWith("#/")) comeBack = next; else if (shown && !shown.startsWith("#/start")) comeBack = shown;
  }
  shown = location.hash;
  renderNav(route);
  const waiting = setTimeout(() => {
    if (mine === generation) { main.setAttribute("aria-busy", "true"); main.replaceChildren(skeleton()); }
  }, SKELETON_AFTER_MS);
  let nodes;
  try {
    const screen = await (routes[route] || fallback)(...rest.map(decodeURIComponent));
    nodes = [screen].flat(Infinity).filter((node) => node != null && node !== false);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) { session.tokens = null; return go(startLink()); }
    nodes = [h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, errorText(error))];
  } finally {
    clearTimeout(waiting);
  }
  // A later navigation owns the screen now: this one's answer is dropped.
  if (mine !== generation) return;
  main.removeAttribute("aria-busy");
  main.replaceChildren(...nodes);
  main.focus({ preventScroll: true });
  // The screen is drawn: the browser tests time its first paint by this mark (one per screen).
  const mark = `screen:${route || "home"}`;
  performance.clearMarks(mark);
  performance.mark(mark);
}

/** Starts routing; unknown routes show `home`. */
export function start(home) {
  fallback = home;
  window.addEventListener("hashchange", render);
  render();
}
