// The email flows: asking for a password-reset link (#/forgot-password), choosing a new password
// with it (#/reset-password/<token>), confirming an address from a mailed link
// (#/verify-email/<token>, a sign-up's, a resent or an address change's) and the settings' Email
// section (confirmed or not, send the link again, change the address). The three screens work
// signed out: the links are opened from a mailbox, often on another device. A link's token leaves
// the address as soon as its screen reads it (#/reset-password, #/verify-email stay): the page
// keeps it in memory, the history and a reload do not.
import { api, session, ApiError } from "./api.js";
import { h, showProblem, field, errorText } from "./ui.js";
import { go } from "./router.js";
import { disconnect } from "./live.js";
import { enc } from "./format.js";
import { signInForm } from "./start.js";

/** The start screen, coming back home after signing in (not to the link's screen). */
const SIGN_IN = `#/start?next=${enc("#/")}`;

/** Calls an auth route that needs no login: a login of this browser that has ended (its refresh
 * failed, so the tokens are gone) does not stand in the way, the call goes again without it. */
async function publicCall(path, body) {
  try { return await api("POST", path, body); } catch (error) {
    if (error instanceof ApiError && error.status === 401 && !session.tokens) { disconnect(); return api("POST", path, body); }
    throw error;
  }
}

/** Each mailed link's token, by screen, once read from the address (this page only). */
const tokens = {};

/** The token of the `screen` ("reset-password", "verify-email") whose route gave `token`: a token
 * from the route is kept here and taken out of the address (its history entry too, without a
 * hashchange, so the router does not draw again); no token in the route is the one this page last
 * read for the screen (going back to it), else "" (a reload, a bare #/verify-email). */
function linkToken(screen, token) {
  if (token) {
    tokens[screen] = token;
    if (location.hash.startsWith(`#/${screen}/`)) history.replaceState(history.state, "", `#/${screen}`);
  }
  return tokens[screen] || "";
}

/** A mailed link's screen without its token: the link is opened again from the mailbox. */
const noLink = (title, ...next) => [h("h1", {}, title),
  h("p", { role: "status" }, "Open the link from your email again."), ...next];

/** Whether a problem is a dead link's (used or replaced, expired). */
const deadLink = (error) => error instanceof ApiError && ["invalid_link", "link_expired"].includes(error.code);

/** What a dead link says, with the way to a new one. */
function linkProblem(error, ...next) {
  return [h("p", { class: "error", role: "alert" }, errorText(error)), ...next];
}

function forgotScreen() {
  const intro = h("p", { class: "muted" }, "Tell us the email address of your account and we'll send it a link to choose a new password.");
  const form = h("form", { "aria-label": "Forgot password", onsubmit: async (event) => {
    event.preventDefault();
    const email = String(new FormData(form).get("email")).trim();
    try {
      await publicCall("/v1/auth/password-reset", { email });
    } catch (error) { return showProblem(form, error); }
    // The same words whether or not an account has this address: nobody learns who has one here.
    intro.remove();
    form.replaceWith(h("p", { role: "status" },
      `If an account uses ${email}, we've sent it a link to choose a new password. It works for 30 minutes.`),
    h("p", { class: "muted" }, "Nothing in your inbox after a few minutes? Look in spam, or ",
      h("a", { href: "#/forgot-password", onclick: (e) => { e.preventDefault(); go("#/forgot-password"); } }, "ask again"), "."));
  } }, field("Email", "email", "email", { autocomplete: "email" }), h("button", { type: "submit" }, "Send me a link"));
  return [h("h1", {}, "Forgot your password?"), intro, form, back()];
}

/** The way back to the start screen (signed out) or home. */
const back = () => h("p", {}, session.tokens ? h("a", { href: "#/" }, "Back to Tonight") : h("a", { href: SIGN_IN }, "Back to sign in"));

function resetScreen(link = "") {
  const askAgain = () => h("p", {}, h("a", { href: "#/forgot-password" }, "Ask for a new link"));
  const token = linkToken("reset-password", link);
  if (!token) return noLink("Choose a new password", askAgain());
  const form = h("form", { "aria-label": "Reset password", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await publicCall("/v1/auth/password-reset/complete", { token, newPassword: new FormData(form).get("newPassword") });
    } catch (error) {
      if (!deadLink(error)) return showProblem(form, error);
      return form.replaceWith(...linkProblem(error, askAgain()));
    }
    delete tokens["reset-password"]; // used: going back here asks for a new link
    // Every login of the account ended; if this browser held one of them, it goes too (the refresh fails).
    if (session.tokens) {
      await api("GET", "/v1/me").catch(() => null);
      if (!session.tokens) disconnect();
    }
    form.replaceWith(h("p", { role: "status" }, "Your password is changed. Sign in with it."), signInForm());
  } },
  field("New password", "newPassword", "password", { autocomplete: "new-password", minlength: 10, "aria-describedby": "new-password-hint" }),
  h("p", { class: "muted small", id: "new-password-hint" }, "At least 10 characters. Once it's changed, every login of your account ends."),
  h("button", { type: "submit" }, "Save new password"));
  return [h("h1", {}, "Choose a new password"), form];
}

/** Tokens confirmed in this page, with their address: drawing the screen again says so again. */
const confirmed = new Map();

async function verifyScreen(link = "") {
  const token = linkToken("verify-email", link);
  if (!token) return noLink("Confirm your email address", newLink());
  let email = confirmed.get(token);
  if (!email) {
    try {
      ({ email } = await publicCall("/v1/auth/email/verify", { token }));
      confirmed.set(token, email);
    } catch (error) {
      if (error instanceof ApiError && error.code === "taken") {
        return [h("h1", {}, "This address can't be confirmed"),
          h("p", { class: "error", role: "alert" }, "Another account uses this address now. Choose another one in settings."),
          h("p", {}, session.isMember ? h("a", { href: "#/settings" }, "Email settings")
            : h("a", { href: `#/start?next=${enc("#/settings")}` }, "Sign in"))];
      }
      if (!deadLink(error)) throw error;
      return [h("h1", {}, "This link doesn't work"), ...linkProblem(error, newLink())];
    }
    // The signed-in account may be the one just confirmed: keep what the app knows of it fresh.
    if (session.isMember) {
      api("GET", "/v1/me").then((me) => { if (session.tokens) session.tokens = { ...session.tokens, user: me }; }).catch(() => null);
    }
  }
  return [h("h1", {}, "Email address confirmed"), h("p", { role: "status" }, `${email} is confirmed.`),
    session.isMember ? h("p", { class: "links" }, h("a", { href: "#/settings" }, "Settings"), " · ", h("a", { href: "#/" }, "Home"))
      : h("p", {}, h("a", { href: SIGN_IN }, "Sign in"))];
}

/** After a dead confirmation link: a member sends a new one; someone signed out signs in first. */
function newLink() {
  if (!session.isMember) {
    return h("p", {}, h("a", { href: `#/start?next=${enc("#/settings")}` }, "Sign in to get a new link"));
  }
  const said = note();
  const send = h("button", { type: "button", onclick: async () => {
    send.disabled = true;
    try {
      await api("POST", "/v1/me/email/verification");
      said.say("Sent. Check your inbox.");
    } catch (error) {
      said.say(error.code === "already_verified"
        ? "Your address is already confirmed. To change it, ask again in settings." : errorText(error));
      send.disabled = false;
    }
  } }, "Send a new link");
  return h("div", {}, send, said, h("p", {}, h("a", { href: "#/settings" }, "Email settings")));
}

/** A status line, hidden until it has something to say (`say(text)`). */
function note(text = "") {
  const line = h("p", { role: "status", hidden: !text }, text);
  line.say = (words) => { line.textContent = words; line.hidden = !words; };
  return line;
}

// Settings

/** The settings' Email section: the address, confirmed or not (with a new link on request), an
 * address waiting for its link, and the form to change it. */
export function emailSection(me) {
  const state = h("div", { class: "email-state" });
  const paint = (told, changed = false) => {
    const address = me.email
      ? h("p", {}, h("strong", { class: "email-address" }, me.email), " · ",
        me.emailVerified ? h("span", { class: "ok" }, "Confirmed") : h("span", { class: "muted" }, "Not confirmed yet"))
      : h("p", { class: "muted" }, "No email address yet.");
    const said = note(told);
    const resend = me.email && !me.emailVerified ? h("button", { type: "button", class: "secondary", onclick: async () => {
      resend.disabled = true;
      try {
        await api("POST", "/v1/me/email/verification");
        said.say("Sent. Check your inbox.");
      } catch (error) {
        if (error.code === "already_verified") return refresh("Your address is already confirmed.");
        said.say(errorText(error));
      }
      resend.disabled = false;
    } }, "Send the link again") : null;
    // Right after a change the note says where the link went; the waiting address shows on coming back.
    const pending = me.pendingEmail && !changed ? h("p", { class: "muted" }, `Waiting for you to open the link we sent to ${me.pendingEmail}.`) : null;
    state.replaceChildren(...[address, resend, pending, said].filter(Boolean));
  };
  const refresh = async (told, changed = false) => {
    try { me = await api("GET", "/v1/me"); } catch { /* what is shown stays */ }
    paint(told, changed);
  };
  const form = h("form", { "aria-label": "Change email", onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const email = String(data.get("email")).trim();
    try {
      await api("PUT", "/v1/me/email", { email, password: data.get("password") });
    } catch (error) { return showProblem(form, error); }
    form.reset();
    form.querySelector(".error")?.remove();
    await refresh(`Open the link we sent to ${email} to finish the change.`, true);
  } },
  h("h3", {}, me.email ? "Change email" : "Add an email address"),
  field(me.email ? "New email address" : "Email address", "email", "email", { autocomplete: "email" }),
  field("Current password", "password", "password", { autocomplete: "current-password" }),
  h("button", { type: "submit", class: "secondary" }, me.email ? "Change email" : "Add email"));
  paint();
  return h("section", { "aria-label": "Email" }, h("h2", {}, "Email"), state, form);
}

/** The screens open to someone signed out (router.js lets them through). */
export const signedOutRoutes = ["forgot-password", "reset-password", "verify-email"];

export const routes = { "forgot-password": forgotScreen, "reset-password": resetScreen, "verify-email": verifyScreen };
