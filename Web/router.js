// The hash router: "#/name/arg1/arg2?query". Screens are functions (args…) → node(s), sync or async.
import { ApiError, session } from "./api.js";
import { h } from "./ui.js";

const routes = {};
let leaving = [];
let fallback = () => [];

/** Adds screens: `{ name: (arg…) => nodes }`. The "" route is home. */
export function register(screens) { Object.assign(routes, screens); }

/** Runs `fn` when the current screen is left (stop players, sockets, timers). */
export function onLeave(fn) { leaving.push(fn); }

/** The current hash's query parameters. */
export function params() { return new URLSearchParams(location.hash.split("?")[1] || ""); }

/** Navigates to `hash`, re-rendering when it is already the current one. */
export function go(hash) { if (location.hash === hash) render(); else location.hash = hash; }

let renderNav = () => {};
/** Sets the function that draws the navigation after each render. */
export function setNav(fn) { renderNav = fn; }

export async function render() {
  for (const fn of leaving.splice(0)) { try { fn(); } catch { /* a cleanup never blocks navigation */ } }
  const main = document.getElementById("main");
  const [route, ...rest] = location.hash.replace(/^#\/?/, "").split("?")[0].split("/");
  if (!session.tokens && route !== "start") return go("#/start");
  renderNav(route);
  try {
    const screen = await (routes[route] || fallback)(...rest.map(decodeURIComponent));
    main.replaceChildren(...[screen].flat(Infinity).filter((node) => node != null && node !== false));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) { session.tokens = null; return go("#/start"); }
    main.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, error.message));
  }
  main.focus({ preventScroll: true });
}

/** Starts routing; unknown routes show `home`. */
export function start(home) {
  fallback = home;
  window.addEventListener("hashchange", render);
  render();
}
