// Small DOM helpers shared by the screens.
import { ApiError, session } from "./api.js";
import { fieldSentence, words, shownName } from "./format.js";

/** Builds an element: h("p", {class: "muted"}, "text", child…). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (value !== false && value != null) element.setAttribute(key, value === true ? "" : value);
  }
  element.append(...children.flat(Infinity).filter((c) => c != null && c !== false));
  return element;
}

export function toast(text) {
  const box = document.getElementById("toast");
  box.textContent = text;
  box.classList.add("show");
  setTimeout(() => box.classList.remove("show"), 3000);
}

/** What went wrong, for people: an API problem's sentence or one of our own Errors'; never a bug's text. */
export const errorText = (error) => error instanceof ApiError || error?.constructor === Error ? error.message
  : "Something went wrong. Try again in a moment.";

/** Shows a problem next to a form: each field's message as a sentence under the label the person
 * sees ("Password: at least 10 characters."), else the problem's own sentence. */
export function showProblem(form, error) {
  form.querySelector(".error")?.remove();
  form.querySelectorAll("[aria-invalid]").forEach((input) => input.removeAttribute("aria-invalid"));
  const fields = error instanceof ApiError ? error.fields : [];
  const messages = fields.length ? fields.map((f) => {
    const input = form.querySelector(`[name="${CSS.escape(f.field)}"]`);
    input?.setAttribute("aria-invalid", "true");
    const label = input?.closest("label")?.firstChild?.textContent?.trim();
    return fieldSentence(label || words(f.field), f.message);
  }) : [errorText(error)];
  form.append(h("p", { class: "error", role: "alert" }, messages.join(" ")));
}

/** A screen's main list and what goes with it (filters, a map, a feed), in two columns on wide
 * screens and one below the other on phones, where `sideFirst` puts the side above the list (and
 * on its left when wide). */
export function split(list, side, sideFirst = false) {
  const parts = [h("div", { class: "split-list" }, list), h("div", { class: "split-side" }, side)];
  return h("div", { class: `split${sideFirst ? " side-first" : ""}` }, sideFirst ? parts.reverse() : parts);
}

/** A wide screen (two columns: see split). */
export const wide = () => matchMedia("(min-width: 1024px)").matches;

/** A person's photo, or the first letter of their name on a tile when they have none. "small" (a
 * round 44 px, beside their name: decorative), "tiny" (28 px, the same) or "large" (a big square
 * that says whose photo it is). */
export function avatar(user, size = "small") {
  const name = shownName(user, "");
  return user?.avatarUrl
    ? h("img", { class: `avatar ${size}`, src: user.avatarUrl, alt: size === "large" ? `Photo of ${name || "someone"}` : "", draggable: "false" })
    : h("span", { class: `avatar ${size} initial`, "aria-hidden": "true" }, name.slice(0, 1).toUpperCase());
}

export function field(label, name, type = "text", extra = {}) {
  return h("label", {}, label, h("input", { name, type, required: true, ...extra }));
}


const LAST_POSITION = "tonight.lastPosition";
const POSITION_FRESH_MS = 5 * 60 * 1000;
let asked = null;
let askedAt = 0;

/** The browser's position as "lat,lon" if the user allows it, else the last one known on this
 * device, else null. Asked once and shared: screens opened meanwhile wait for the same answer
 * (never more than 2.5 s), and a refusal or a timeout is not asked again until reload. */
export function position() {
  const fresh = Date.now() - askedAt < POSITION_FRESH_MS;
  if (asked && (fresh || asked.final)) return asked.promise;
  askedAt = Date.now();
  const fallback = () => localStorage.getItem(LAST_POSITION);
  const ask = { final: false };
  ask.promise = new Promise((resolve) => {
    if (!navigator.geolocation) { ask.final = true; return resolve(fallback()); }
    navigator.geolocation.getCurrentPosition(
      (p) => {
        const near = `${p.coords.latitude.toFixed(4)},${p.coords.longitude.toFixed(4)}`;
        localStorage.setItem(LAST_POSITION, near);
        resolve(near);
      },
      () => { ask.final = true; resolve(fallback()); }, { timeout: 2500, maximumAge: 600000 });
  });
  asked = ask;
  return ask.promise;
}

let signUpPrompt = null;
/** Sets what the sign-up dialog holds: `(close) → nodes` (the start screen's sign-up form, given by
 * app.js so that this module imports no screen); `close()` ends the dialog. */
export function setSignUpPrompt(content) { signUpPrompt = content; }

const FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex='-1'])";

/** A modal dialog named `name` over the page: the rest is inert, focus moves into it (its first
 * field, else its first control) and stays there (Tab and Shift+Tab go round), Escape or a change
 * of screen closes it, and focus goes back to where it was. `content(close)` gives its nodes. */
export function modal(name, content) {
  const before = document.activeElement;
  const outside = [...document.body.children].filter((element) => element.id !== "toast"); // toasts still speak
  const dialog = h("div", { class: "modal card", role: "dialog", "aria-modal": "true", "aria-label": name, tabindex: "-1" });
  // A tap beside the dialog or on its text leaves the focus in it.
  const backdrop = h("div", { class: "modal-backdrop", onmousedown: (event) => { if (event.target === backdrop) event.preventDefault(); } }, dialog);
  const controls = () => [...dialog.querySelectorAll(FOCUSABLE)].filter((element) => element.offsetParent !== null);
  const close = () => {
    if (!backdrop.isConnected) return;
    backdrop.remove();
    outside.forEach((element) => element.removeAttribute("inert"));
    window.removeEventListener("hashchange", close);
    if (before?.isConnected) before.focus({ preventScroll: true });
  };
  dialog.append(...[content(close)].flat(Infinity).filter((node) => node != null && node !== false));
  dialog.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { event.preventDefault(); close(); return; }
    if (event.key !== "Tab") return;
    const all = controls();
    const at = all.indexOf(document.activeElement);
    if (event.shiftKey ? at <= 0 : at < 0 || at === all.length - 1) {
      event.preventDefault();
      all.at(event.shiftKey ? -1 : 0)?.focus();
    }
  });
  outside.forEach((element) => element.setAttribute("inert", ""));
  document.body.append(backdrop);
  window.addEventListener("hashchange", close);
  (dialog.querySelector("input, select, textarea") || controls()[0])?.focus();
  return { dialog, close };
}

/** Anonymous users can look but not write: returns false (and asks them to sign up) until they
 * do. The sign-up form opens in one modal dialog however often they tap (again: it is focused),
 * and signing up there keeps them on this screen, now as a member. */
export function requireMember() {
  if (session.isMember) return true;
  const open = document.querySelector(".modal[data-sign-up]");
  if (open) { (open.querySelector("input") || open).focus(); return false; }
  const { dialog } = modal("Sign up to continue", (close) => [
    h("p", {}, "Sign up to post, vote, comment or join — it takes ten seconds."),
    signUpPrompt ? signUpPrompt(close) : null,
    h("button", { type: "button", class: "secondary", onclick: close }, "Not now")]);
  dialog.setAttribute("data-sign-up", "");
  return false;
}

/** A button that runs `action` and shows its problem as a toast. */
export function actionButton(label, action, attributes = {}) {
  return h("button", { type: "button", ...attributes, onclick: async (event) => {
    try { await action(event); } catch (error) { toast(errorText(error)); }
  } }, label);
}
