// Tonight's web app: a tiny hash router and one function per screen. Uses only /v1 and /v1/live.
import { api, ApiError, session } from "./api.js";
import { h, showProblem, field } from "./ui.js";
import { eventsScreen, eventScreen } from "./events.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");

/** A form that posts its fields to an auth route and signs in with the answer. */
function authForm(title, path, fields, button) {
  return h("form", { "aria-label": title, onsubmit: async (event) => {
    event.preventDefault();
    try {
      session.tokens = await api("POST", path, Object.fromEntries(new FormData(event.target)));
      go("#/");
    } catch (error) { showProblem(event.target, error); }
  } }, h("h2", {}, title), ...fields, h("button", { type: "submit" }, button));
}

function startScreen() {
  const signUp = authForm("Sign up", "/v1/auth/signup", [
    field("Username", "username", "text", { autocomplete: "username" }),
    field("Email", "email", "email", { autocomplete: "email" }),
    field("Password", "password", "password", { autocomplete: "new-password", minlength: 10 }),
  ], "Sign up");
  const signIn = authForm("Sign in", "/v1/auth/login", [
    field("Username or email", "username", "text", { autocomplete: "username" }),
    field("Password", "password", "password", { autocomplete: "current-password" }),
  ], "Sign in");
  const anonymous = h("button", { class: "secondary", type: "button", onclick: async () => {
    session.tokens = await api("POST", "/v1/auth/anonymous");
    go("#/");
  } }, "Continue without an account");
  return [h("h1", {}, "Where do we go tonight?"), signUp, signIn, h("p", {}, anonymous,
    h("span", { class: "muted" }, " — you can look around; sign up to post, vote or join."))];
}

async function homeScreen() {
  const me = await api("GET", "/v1/me");
  const name = me.isAnonymous ? "guest" : (me.displayName || me.username);
  return [h("h1", {}, `Hi, ${name}`),
    h("p", { class: "muted" }, "Venues, clips, events, people and sports sessions near you."),
    me.isAnonymous ? h("p", {}, h("a", { href: "#/start" }, "Sign up"), " to post, vote and join.") : null];
}

const routes = { "": homeScreen, "start": startScreen, "events": eventsScreen, "event": eventScreen };

export function go(hash) { if (location.hash === hash) render(); else location.hash = hash; }

async function render() {
  const [route, ...rest] = location.hash.replace(/^#\/?/, "").split("?")[0].split("/");
  if (!session.tokens && route !== "start") return go("#/start");
  nav.replaceChildren(...(session.tokens ? [h("a", { href: "#/" }, "Home"), h("a", { href: "#/events" }, "Events"),
    h("a", { href: "#/start", onclick: () => { session.tokens = null; } }, session.isMember ? "Sign out" : "Sign in")] : []));
  try {
    const screen = await (routes[route] || homeScreen)(...rest.map(decodeURIComponent));
    main.replaceChildren(...[screen].flat().filter((node) => node != null && node !== false));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) { session.tokens = null; return go("#/start"); }
    main.replaceChildren(h("p", { class: "error", role: "alert" }, error.message));
  }
  main.focus();
}

window.addEventListener("hashchange", render);
render();
