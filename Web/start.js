// Start (sign up, sign in, continue anonymously) and home (the five apps in one place). The sign-in
// form is also the reset-password screen's (email.js), once the new password is set.
import { api, session } from "./api.js";
import { h, showProblem, field } from "./ui.js";
import { go, params, returnTo, startLink } from "./router.js";
import { disconnect } from "./live.js";
import { shownName, enc, eventWhen, TICKETED_QUERY } from "./format.js";

/** Keeps the tokens of a new login and goes back where the person was, or home (the live socket
 * reconnects with them). */
function signIn(tokens) {
  session.tokens = tokens;
  disconnect();
  go(returnTo());
}

/** A form that posts its fields to an auth route and signs in with the answer (`after`: below its
 * button; `done(tokens)`: what signing in does, by default going back where the person was). */
function authForm(title, path, fields, button, after = null, done = signIn) {
  return h("form", { "aria-label": title, onsubmit: async (event) => {
    event.preventDefault();
    try {
      done(await api("POST", path, Object.fromEntries(new FormData(event.target))));
    } catch (error) { showProblem(event.target, error); }
  } }, h("h2", {}, title), ...fields, h("button", { type: "submit" }, button), after);
}

/** The sign-up form (`done` as authForm's). */
function signUpForm(done) {
  return authForm("Sign up", "/v1/auth/signup", [
    field("Username", "username", "text", { autocomplete: "username" }),
    field("Email", "email", "email", { autocomplete: "email" }),
    field("Password", "password", "password", { autocomplete: "new-password", minlength: 10 }),
  ], "Sign up", null, done);
}

/** What the sign-up dialog of `requireMember` (ui.js) holds: the sign-up form, which keeps the person
 * on the screen they are on (drawn again for the new member) and `close`s the dialog, and the way to
 * sign in instead (the start screen, then back here). */
export function signUpPrompt(close) {
  return [signUpForm((tokens) => {
    session.tokens = tokens;
    disconnect();
    close();
    go(location.hash || "#/");
  }), h("p", {}, "Have an account? ", h("a", { href: startLink() }, "Sign in"))];
}

/** The sign-in form, with the way to a new password. */
export function signInForm() {
  return authForm("Sign in", "/v1/auth/login", [
    field("Username or email", "username", "text", { autocomplete: "username" }),
    field("Password", "password", "password", { autocomplete: "current-password" }),
  ], "Sign in", h("p", {}, h("a", { href: "#/forgot-password" }, "Forgot password?")));
}

function startScreen() {
  const signUp = signUpForm();
  const login = signInForm();
  const anonymous = h("button", { type: "button", onclick: async () => {
    signIn(await api("POST", "/v1/auth/anonymous"));
  } }, "Continue without an account");
  // What's on first, looking around one tap away; the forms open from their buttons.
  const tonight = h("ul", { class: "list start-tonight", "aria-label": "On tonight" });
  api("GET", `/v1/events?when=tonight&sort=start&limit=3&${TICKETED_QUERY}`).then((page) => {
    tonight.append(...page.items.map((event) => h("li", { class: "card" },
      h("a", { href: `#/event/${enc(event.id)}` }, event.name), h("div", { class: "muted small" },
        event.place?.name || "", " · ", eventWhen(event)))));
  }).catch(() => { /* the list is a teaser: the screen works without it */ });
  return [h("h1", {}, "Where do we go tonight?"), tonight,
    h("p", {}, anonymous, h("span", { class: "muted" }, " — look around now; sign up to post, vote or join.")),
    // A sign-up prompt opens the sign-up form at once (`form=signup`).
    h("details", { class: "start-form", open: params().get("form") === "signup" },
      h("summary", { class: "button" }, "Sign up"), signUp),
    h("details", { class: "start-form" }, h("summary", { class: "button secondary" }, "Sign in"), login)];
}

const apps = [
  ["#/hub", "Venues", "Clips from partiers at venues near you, right now."],
  ["#/clips", "Dance clips", "Following, explore and tags; learn the moves in tutorial mode."],
  ["#/events", "Events", "Shows tonight and this weekend; artists you love; explore cards."],
  ["#/pala", "Meet people", "Who else is going; like, match and chat."],
  ["#/sessions", "Sports", "Play with friends: find, create and join sessions."],
];

export async function homeScreen() {
  const me = await api("GET", "/v1/me");
  const name = me.isAnonymous ? "guest" : shownName(me);
  return [h("h1", {}, `Hi, ${name}`),
    me.isAnonymous ? h("p", {}, h("a", { href: "#/start" }, "Sign up"), " to post, vote and join.") : null,
    h("ul", { class: "list apps" }, apps.map(([href, title, text]) =>
      h("li", { class: "card" }, h("a", { href }, h("strong", {}, title)), h("div", { class: "muted" }, text))))];
}

export const routes = { "start": startScreen, "home": homeScreen };
