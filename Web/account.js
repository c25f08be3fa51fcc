// Account-wide screens: the header's live inbox badge, the notifications inbox (#/inbox), settings
// (#/settings: profile, preferences, notification kinds and quiet hours, this browser's
// notifications (from webpush.js), devices, email (from email.js), password, sign out); the staff
// screens (#/moderation, #/admin) load on demand from admin.js, which shares the form helpers
// exported here.
import { api, session, pagePath } from "./api.js";
import { h, toast, showProblem, field, actionButton } from "./ui.js";
import { go, onLeave } from "./router.js";
import { subscribe, disconnect } from "./live.js";
import { emailSection } from "./email.js";
import { webPushSection, unsubscribe as stopBrowserPush } from "./webpush.js";
import { target } from "./notify-target.js";
import { enc, fromNow, deviceZone, label, GENDERS, AGE_GROUPS, NOTIFICATION_KINDS, DEVICE_PLATFORMS } from "./format.js";

const KINDS = NOTIFICATION_KINDS.map(([kind]) => kind);

// Unread badge

let unread = 0;
let countedFor = null; // the access token the count was fetched with
let countedUser = null;
let listening = false;

function paint(badge) {
  badge.textContent = unread ? String(unread) : "";
  if (unread) badge.setAttribute("aria-label", `${unread} unread`); else badge.removeAttribute("aria-label");
}

const unreadWatchers = [];
/** Calls `fn(count)` whenever the unread count is known anew (0 after "Mark all read", say). */
export function onUnread(fn) { unreadWatchers.push(fn); }

function setUnread(count) {
  if (typeof count !== "number") return;
  unread = Math.max(0, count);
  document.querySelectorAll(".badge[data-unread]").forEach(paint);
  for (const fn of unreadWatchers) fn(unread);
}

async function refreshCount() {
  const user = session.user?.id;
  try {
    const { unread: count } = await api("GET", "/v1/notifications/unread-count");
    if (session.user?.id === user) setUnread(count); // not someone else's count after a quick sign-out
  } catch { /* the badge just stays as it was */ }
}

/** The header's inbox link; its badge shows the unread count live (members only). */
export function inboxLink() {
  const link = h("a", { href: "#/inbox" }, "Inbox");
  if (!session.isMember) return link;
  const token = session.tokens?.accessToken;
  if (token !== countedFor) {
    countedFor = token;
    if (session.user.id !== countedUser) { countedUser = session.user.id; unread = 0; }
    refreshCount();
  }
  if (!listening) {
    listening = true;
    subscribe("notification", (data) => setUnread(data.unreadCount));
    subscribe("ready", () => { if (session.isMember) refreshCount(); }); // (re)connected: resync
  }
  const badge = h("span", { class: "badge", "data-unread": "" });
  paint(badge);
  link.append(" ", badge);
  return link;
}

// Small helpers

/** A list filled page by page from a cursor-paged GET, with a "More" button. */
export function pager(path, render, onPage) {
  const list = h("ul", { class: "list" });
  let cursor = null;
  const more = actionButton("More", () => load(), { class: "secondary", hidden: true });
  async function load() {
    const page = await api("GET", pagePath(path, { cursor }));
    list.append(...page.items.map(render));
    cursor = page.nextCursor || null;
    more.hidden = !cursor;
    onPage?.(page);
  }
  return { list, more, load };
}

/** An optional text field (or `extra.type`) with its current value. */
export const optional = (label, name, value, extra = {}) =>
  field(label, name, extra.type || "text", { required: false, value: value ?? "", ...extra });

/** A labelled <select> (the aria-label keeps the option text out of its name). */
export function select(label, name, options, current) {
  return h("label", {}, label, h("select", { name, "aria-label": label }, options.map(([value, text]) =>
    h("option", { value, selected: String(current ?? "") === String(value) }, text))));
}

/** Checkboxes named `name` for [value, label] rows, `chosen` ticked. */
function checks(legend, name, rows, chosen = []) {
  return h("fieldset", { class: "checks" }, h("legend", {}, legend), rows.map(([value, text]) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", name, value, checked: chosen.includes(value) }), text)));
}

/** A form that runs `submit(data)` with its FormData when sent; a problem shows next to the form. */
export function settingsForm(label, submit, ...children) {
  const form = h("form", { "aria-label": label, onsubmit: async (event) => {
    event.preventDefault();
    try { await submit(new FormData(form)); } catch (error) { showProblem(form, error); }
  } }, ...children);
  return form;
}

/** Clears the form's problem and says it was saved. */
export const saved = (form, text = "Saved") => {
  form.querySelector(".error")?.remove();
  toast(text);
};

/** A city search input with geocoding suggestions; a hidden input `name` holds the chosen key. */
export function cityPicker(label, name, current, keyOf = (c) => c.key, show = (c) => `${c.name}, ${c.region}, ${c.countryCode}`) {
  const hidden = h("input", { type: "hidden", name, value: current || "" });
  const options = h("datalist", { id: `cities-${name}` });
  const known = new Map();
  let timer;
  const input = h("input", { type: "search", list: `cities-${name}`, autocomplete: "off",
    value: current ? current.split("$").join(", ") : "", placeholder: "Start typing a city" });
  input.addEventListener("input", () => {
    const text = input.value.trim();
    hidden.value = known.get(text) ?? text;
    clearTimeout(timer);
    if (known.has(text) || text.length < 2) return;
    timer = setTimeout(async () => {
      const found = await api("GET", `/v1/geocode?q=${enc(text.split(",")[0])}&limit=8`).catch(() => ({ items: [] }));
      for (const city of found.items) known.set(show(city), keyOf(city));
      options.replaceChildren(...found.items.map((city) => h("option", { value: show(city) })));
      const now = input.value.trim();
      if (known.has(now)) hidden.value = known.get(now);
    }, 250);
  });
  return h("label", {}, label, input, options, hidden);
}

const memberOnly = (title, text) => [h("h1", {}, title), h("p", {}, text, " ", h("a", { href: "#/start" }, "Sign up"))];

// Inbox

/** Opens a notification: marks it read, and for a match opens the chat with the other person. */
async function open(n, item, event) {
  if (!n.readAt) {
    n.readAt = new Date().toISOString();
    item.classList.remove("unread");
    item.querySelector(".new")?.remove();
    api("POST", `/v1/notifications/${enc(n.id)}/read`).then((r) => setUnread(r.unread), () => {});
  }
  if (n.kind === "match" && !n.conversationId && n.actor) {
    event.preventDefault();
    try {
      const chat = await api("POST", "/v1/conversations", { userId: n.actor.id });
      go(`#/chat/${enc(chat.id)}`);
    } catch (error) { toast(error.message); }
  }
}

function notificationItem(n) {
  const href = target(n);
  const item = h("li", { class: `card note${n.readAt ? "" : " unread"}` });
  const text = href ? h("a", { href, onclick: (event) => open(n, item, event) }, n.text) : h("span", {}, n.text);
  item.append(n.readAt ? "" : h("span", { class: "new", role: "img", "aria-label": "Unread" }, "● "), text,
    h("div", { class: "muted small" }, label(NOTIFICATION_KINDS, n.kind, 2), " · ", h("time", { datetime: n.createdAt }, fromNow(n.createdAt))));
  return item;
}

async function inboxScreen() {
  if (!session.isMember) return memberOnly("Inbox", "Friend requests, matches and invitations arrive here once you have an account.");
  const empty = h("p", { class: "muted", hidden: true }, "Nothing yet. Friend requests, matches and invitations show up here.");
  const { list, more, load } = pager("/v1/notifications?limit=20", notificationItem, (page) => {
    setUnread(page.unreadCount);
    empty.hidden = list.children.length > 0;
  });
  list.classList.add("inbox");
  list.setAttribute("aria-label", "Notifications");
  await load();
  onLeave(subscribe("notification", (data) => {
    if (!data.notification) return;
    list.prepend(notificationItem(data.notification));
    empty.hidden = true;
  }));
  const markAll = actionButton("Mark all read", async () => {
    const result = await api("POST", "/v1/notifications/read-all");
    setUnread(result.unread);
    list.querySelectorAll(".unread").forEach((item) => { item.classList.remove("unread"); item.querySelector(".new")?.remove(); });
  }, { class: "secondary" });
  return [h("div", { class: "heading-row" }, h("h1", {}, "Inbox"), markAll), empty, list, more,
    h("p", { class: "muted small" }, h("a", { href: "#/settings" }, "Choose which notifications you get"))];
}

// Settings

const PROFILE_FIELDS = ["displayName", "bio", "homeCity", "gender", "birthDate"];

// The profile photo, uploaded when chosen (the server squares it and strips its metadata).
function photoForm(me) {
  const preview = h("div", { class: "photo-preview" });
  const store = (user) => {
    me = user;
    if (session.tokens) session.tokens = { ...session.tokens, user };
    remove.hidden = !me.avatarUrl;
    preview.replaceChildren(me.avatarUrl ? h("img", { class: "avatar small", src: me.avatarUrl, alt: "Your photo" })
      : h("span", { class: "muted" }, "No photo yet"));
  };
  const input = h("input", { type: "file", accept: "image/jpeg,image/png,image/heic,.heic", onchange: async () => {
    const file = input.files[0];
    try {
      store(await api("POST", "/v1/me/photo", new Blob([file], { type: ["image/png", "image/heic"].includes(file.type) ? file.type : "image/jpeg" })));
      saved(form, "Photo saved");
    } catch (error) { showProblem(form, error); }
    input.value = "";
  } });
  const remove = actionButton("Remove photo", async () => { store(await api("DELETE", "/v1/me/photo")); saved(form, "Photo removed"); },
    { class: "secondary" });
  const form = h("form", { "aria-label": "Photo" }, h("h2", {}, "Photo"), preview, h("label", {}, "Choose a photo", input), remove);
  store(me);
  return form;
}

function profileForm(me) {
  const form = settingsForm("Profile", async (data) => {
    const change = { clear: [], showNameOnPosts: data.has("showNameOnPosts") };
    for (const key of PROFILE_FIELDS) {
      const value = String(data.get(key) ?? "").trim();
      if (value === (me[key] || "")) continue;
      if (value) change[key] = value; else change.clear.push(key);
    }
    if (!change.clear.length) delete change.clear;
    me = await api("PATCH", "/v1/me", change);
    if (session.tokens) session.tokens = { ...session.tokens, user: me };
    saved(form, "Profile saved");
  },
  h("h2", {}, "Profile"),
  h("p", { class: "muted" }, `@${me.username}`, me.email ? ` · ${me.email}` : ""),
  optional("Display name", "displayName", me.displayName, { maxlength: 100, autocomplete: "nickname" }),
  h("label", {}, "Bio", h("textarea", { name: "bio", maxlength: 500, rows: 3 }, me.bio || "")),
  cityPicker("Home city", "homeCity", me.homeCity),
  select("Gender", "gender", [["", "Not set"], ...GENDERS], me.gender),
  optional("Birth date", "birthDate", me.birthDate, { type: "date" }),
  h("label", { class: "check" }, h("input", { type: "checkbox", name: "showNameOnPosts", checked: me.showNameOnPosts }),
    "Show my name on my clips"),
  h("button", { type: "submit" }, "Save profile"));
  return form;
}

function preferencesForm(me) {
  const p = me.preferences || {};
  const form = settingsForm("Preferences", async (data) => {
    const preferences = { genderPreference: data.getAll("genderPreference"), preferredAgeGroups: data.getAll("preferredAgeGroups") };
    if (data.get("radius")) preferences.radiusMeters = Math.round(Number(data.get("radius")) * 1000);
    if (data.get("budget")) preferences.budget = Number(data.get("budget"));
    await api("PATCH", "/v1/me", { preferences });
    saved(form, "Preferences saved");
  },
  h("h2", {}, "What I'm looking for"),
  optional("Search radius (km)", "radius", p.radiusMeters ? p.radiusMeters / 1000 : "", { type: "number", min: 0.1, max: 500, step: 0.1 }),
  optional("Budget per night", "budget", p.budget, { type: "number", min: 0, step: 1 }),
  checks("People I want to meet", "genderPreference", GENDERS.map(([value, , people]) => [value, people]), p.genderPreference),
  checks("Age groups I prefer", "preferredAgeGroups", Object.entries(AGE_GROUPS), p.preferredAgeGroups),
  h("button", { type: "submit" }, "Save preferences"));
  return form;
}

function notificationsForm(settings) {
  const quiet = settings.quietHours || {};
  const form = settingsForm("Notifications", async (data) => {
    const body = { muted: KINDS.filter((kind) => !data.getAll("kind").includes(kind)),
      timeZone: settings.timeZone || deviceZone() };
    const [start, end] = [data.get("quietStart"), data.get("quietEnd")];
    if (!!start !== !!end) throw new Error("Give quiet hours both a start and an end (or neither).");
    if (start) body.quietHours = { start, end };
    settings = await api("PUT", "/v1/me/notification-settings", body);
    saved(form, "Notification settings saved");
  },
  h("h2", {}, "Notifications"),
  checks("Notify me about", "kind", NOTIFICATION_KINDS, KINDS.filter((k) => !settings.muted.includes(k))),
  h("fieldset", { class: "quiet" }, h("legend", {}, "Quiet hours (no push, the inbox still fills)"),
    optional("From", "quietStart", quiet.start, { type: "time" }),
    optional("To", "quietEnd", quiet.end, { type: "time" })),
  h("button", { type: "submit" }, "Save notifications"));
  return form;
}

function devicesSection(devices) {
  const list = h("ul", { class: "list" }, devices.items.map((device) => {
    const name = `${label(DEVICE_PLATFORMS, device.platform)} added ${fromNow(device.createdAt)}`;
    const item = h("li", { class: "card row" }, h("span", {}, name),
      actionButton("Remove", async () => { await api("DELETE", `/v1/me/devices/${enc(device.token)}`); item.remove(); },
        { class: "secondary", "aria-label": `Remove ${name}` }));
    return item;
  }));
  return h("section", { "aria-label": "Devices" }, h("h2", {}, "Phones that get notifications"),
    devices.items.length ? list : h("p", { class: "muted" }, "None yet. Sign in on the Tonight iPhone app to get notifications there too."));
}

function passwordForm() {
  const form = settingsForm("Password", async (data) => {
    await api("POST", "/v1/me/password", Object.fromEntries(data));
    form.reset();
    saved(form, "Password changed; your other logins ended");
  }, h("h2", {}, "Password"),
  field("Current password", "currentPassword", "password", { autocomplete: "current-password" }),
  field("New password", "newPassword", "password", { autocomplete: "new-password", minlength: 10 }),
  h("button", { type: "submit", class: "secondary" }, "Change password"));
  return form;
}

/** Ends this login on the server (its refresh token stops working), closes the live socket, forgets the tokens. */
export async function signOut(path = "/v1/auth/logout") {
  try { await stopBrowserPush(); } catch { /* the next push is refused and removes it */ }
  try { await api("POST", path); } catch { /* the tokens are dropped anyway */ }
  forget();
}

/** Forgets the tokens, closes the live socket and goes to the start screen (then home). */
function forget() {
  session.tokens = null;
  disconnect();
  go(`#/start?next=${encodeURIComponent("#/")}`);
}

function accountActions(member = true) {
  return h("section", { "aria-label": "Account", class: "actions" },
    actionButton("Sign out", () => signOut()),
    member && actionButton("Sign out everywhere", () => signOut("/v1/auth/logout-all"), { class: "secondary" })
  );
}

/** Deleting the account asks for the password again: a borrowed phone with an open session is not enough. */
function deleteForm() {
  return settingsForm("Delete account", async (data) => {
    if (!confirm("Delete your account, your clips and your messages for good?")) return;
    await api("DELETE", "/v1/me", { password: data.get("password") });
    await stopBrowserPush(false).catch(() => {});
    forget();
  }, h("h2", {}, "Delete account"),
  h("p", { class: "muted" }, "Your profile, clips, votes and messages are deleted for good."),
  field("Current password", "password", "password", { autocomplete: "current-password", required: true }),
  h("button", { type: "submit", class: "secondary danger" }, "Delete my account"));
}

async function settingsScreen() {
  const me = await api("GET", "/v1/me");
  if (me.isAnonymous) return [...memberOnly("Me", "You are looking around as a guest."), accountActions(false)];
  const [settings, devices, config] = await Promise.all([
    api("GET", "/v1/me/notification-settings"), api("GET", "/v1/me/devices"), api("GET", "/v1/config").catch(() => ({}))]);
  const staff = me.role === "user" ? null : h("nav", { "aria-label": "Staff", class: "staff card" },
    h("a", { href: "#/moderation" }, "Moderation queue"),
    me.role === "admin" ? h("a", { href: "#/admin" }, "Promotions and ads") : null);
  return [h("h1", {}, "Settings"), staff, photoForm(me), profileForm(me), notificationsForm(settings),
    webPushSection(config), preferencesForm(me),
    devicesSection(devices), emailSection(me), passwordForm(), accountActions(), deleteForm()];
}

/** The staff screens load on demand (admin.js): most people never open them. */
const staffScreen = (name) => async (...args) => (await import("./admin.js")).routes[name](...args);

export const routes = { "inbox": inboxScreen, "settings": settingsScreen, "moderation": staffScreen("moderation"), "admin": staffScreen("admin") };
