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

/** Anonymous users can look but not write: returns false (and says so) until they sign up. The
 * prompt is one dialog above the tab bar, whatever is scrolled, and tapping again only focuses
 * it; signing up comes back to this screen. */
export function requireMember() {
  if (session.isMember) return true;
  const open = document.querySelector(".prompt");
  if (open) { open.querySelector("a").focus(); return false; }
  const dialog = h("div", { class: "prompt card", role: "alertdialog", "aria-label": "Sign up to continue" },
    h("p", {}, "Sign up to post, vote, comment or join — it takes ten seconds."),
    h("a", { href: `#/start?form=signup&next=${encodeURIComponent(location.hash || "#/")}`, class: "button" }, "Sign up"), " ",
    h("button", { type: "button", class: "secondary", onclick: () => dialog.remove() }, "Not now"));
  document.body.append(dialog);
  const close = () => { dialog.remove(); window.removeEventListener("hashchange", close); };
  window.addEventListener("hashchange", close);
  dialog.querySelector("a").focus();
  return false;
}

/** A button that runs `action` and shows its problem as a toast. */
export function actionButton(label, action, attributes = {}) {
  return h("button", { type: "button", ...attributes, onclick: async (event) => {
    try { await action(event); } catch (error) { toast(errorText(error)); }
  } }, label);
}
