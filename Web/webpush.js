// Web Push: the service worker (sw.js, registered once on load) and the settings' "Notifications
// in this browser" section, which subscribes this browser with the server's VAPID key
// (`webPushPublicKey` of /v1/config) and hands the subscription to POST /v1/me/web-push; turning
// it off (or signing out) unsubscribes and removes it with DELETE /v1/me/web-push. A session that
// ends otherwise (a refused refresh, a deleted account) drops it in this browser only: the tokens
// are gone, and the server's next push to it is refused, which removes it there.
import { api, session } from "./api.js";
import { h, errorText } from "./ui.js";
import { go } from "./router.js";
import { enc } from "./format.js";

const WORKER = "/sw.js";
/** Whose notifications this browser's subscription brings (a user id): it shows as on for them only. */
const OWNER = "tonight.webPushUser";
/** How long the browser's push service gets to answer a subscription. */
const SUBSCRIBE_TIMEOUT_MS = 15000;

const supported = () => "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

// Whatever ends the session, this browser stops showing that account's notifications (a shared
// browser, the next person). After "Sign out" the subscription is already gone: only the owner goes.
session.onForget(() => { unsubscribe(false).catch(() => {}); });

/** The worker's registration (registering is idempotent: the same one each time). */
const registerWorker = () => navigator.serviceWorker.register(WORKER, { type: "module", scope: "/" });

/** Registers the service worker once the page loads, and lets it open a tapped notification's
 * screen in this window. A browser without service workers (or a refused one) just gets none. */
export function startWorker() {
  if (!("serviceWorker" in navigator)) return;
  registerWorker().catch(() => { /* no notifications in this browser, the app works as before */ });
  navigator.serviceWorker.addEventListener("message", (event) => {
    const hash = event.data?.type === "open" ? event.data.hash : null;
    if (typeof hash === "string" && hash.startsWith("#/")) go(hash);
  });
}

/** This browser's push subscription, if it has one. */
async function current() {
  const registration = await navigator.serviceWorker.getRegistration("/");
  return (await registration?.pushManager.getSubscription()) || null;
}

/** The subscription when it brings the signed-in person's notifications (they turned it on here). */
async function mine() {
  const subscription = await current();
  return subscription && localStorage.getItem(OWNER) === session.user?.id ? subscription : null;
}

/** A base64url string as bytes (the `applicationServerKey`). */
function bytes(base64url) {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "=")), (c) => c.charCodeAt(0));
}

const sameKey = (buffer, key) => !!buffer && new Uint8Array(buffer).join() === key.join();

function withTimeout(promise, ms, message) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(message)), ms); })])
    .finally(() => clearTimeout(timer));
}

const BLOCKED = "Notifications from Tonight are blocked in this browser. Allow them in its settings for this site "
  + "(usually behind the icon beside the address), then reload the page.";

/** Asks for permission, subscribes with the server's key and registers the subscription. */
async function subscribe(key) {
  const permission = await Notification.requestPermission();
  if (permission === "denied") throw new Error(BLOCKED);
  if (permission !== "granted") throw new Error("Notifications were not allowed. Try again and choose Allow.");
  const unstarted = "This browser could not start Tonight's notification service. Reload the page and try again.";
  await registerWorker().catch(() => { throw new Error(unstarted); });
  const registration = await withTimeout(navigator.serviceWorker.ready, SUBSCRIBE_TIMEOUT_MS, unstarted);
  const applicationServerKey = bytes(key);
  const old = await registration.pushManager.getSubscription();
  if (old && !sameKey(old.options?.applicationServerKey, applicationServerKey)) await old.unsubscribe();
  let subscription;
  try {
    subscription = await withTimeout(registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey }),
      SUBSCRIBE_TIMEOUT_MS, "its push service did not answer");
  } catch (error) {
    const why = error?.message ? ` (${error.message.replace(/\.$/, "")})` : "";
    throw new Error(`This browser could not sign up with its push service${why}. Try again later, or in another browser.`);
  }
  try {
    await api("POST", "/v1/me/web-push", subscription.toJSON());
    localStorage.setItem(OWNER, session.user?.id || "");
  } catch (error) {
    await subscription.unsubscribe().catch(() => {});
    throw error;
  }
}

/** Stops pushing to this browser: the server forgets its subscription (unless `tellServer` is
 * false: a deleted account's went with it, an ended session has no tokens) and the browser drops it, so whoever signs in here next
 * does not get it. Were the server not told, its next push would be refused and remove it. */
export async function unsubscribe(tellServer = true) {
  if (!("serviceWorker" in navigator)) return;
  const subscription = await current();
  localStorage.removeItem(OWNER);
  if (!subscription) return;
  if (tellServer) await api("DELETE", `/v1/me/web-push?endpoint=${enc(subscription.endpoint)}`).catch(() => {});
  await subscription.unsubscribe();
}

/** The settings' "Notifications in this browser" section, for the server's `config` (words for people:
 * without a key it says where notifications are found instead, never that a server lacks one). */
export function webPushSection(config) {
  const title = h("h2", {}, "Notifications in this browser");
  const section = (...children) => h("section", { "aria-label": "Notifications in this browser" }, title, ...children);
  if (!supported()) return section(h("p", { class: "muted" }, "This browser cannot show notifications from Tonight."));
  const key = config?.webPushPublicKey;
  if (!key) return section(h("p", { class: "muted" }, "Tonight can't show notifications in this browser yet: you'll find them in your inbox."));

  const state = h("div", { class: "actions" });
  const said = h("p", { "aria-live": "polite" });
  const act = (label, action, attributes = {}) => {
    const button = h("button", { type: "button", ...attributes, onclick: async () => {
      button.disabled = true;
      said.textContent = "";
      try { await action(); } catch (error) { said.textContent = errorText(error); }
      await paint();
    } }, label);
    return button;
  };
  const on = act("Turn on notifications in this browser", () => subscribe(key));
  const off = act("Turn off", async () => { await unsubscribe(); said.textContent = "Off in this browser."; }, { class: "secondary" });
  async function paint() {
    on.disabled = off.disabled = false;
    if (await mine().catch(() => null)) {
      state.replaceChildren(h("strong", {}, "On in this browser"), off);
    } else if (Notification.permission === "denied") {
      state.replaceChildren();
      said.textContent = BLOCKED;
    } else {
      state.replaceChildren(on);
    }
  }
  paint();
  return section(h("p", { class: "muted" }, "The kinds and quiet hours above apply here as on phones."), state, said);
}
