// Account-wide screens: the header's live inbox badge, the notifications inbox (#/inbox), settings
// (#/settings: profile, preferences, notification kinds and quiet hours, devices, password, sign
// out), the moderators' flag queue (#/moderation) and the admins' promotions and ads (#/admin).
import { api, session, pagePath } from "./api.js";
import { h, toast, showProblem, field, position, actionButton } from "./ui.js";
import { go, onLeave } from "./router.js";
import { subscribe, disconnect } from "./live.js";
import { cityAt, findCity } from "./city.js";
import { enc, shownName, fromNow, deviceZone, GENDERS, AGE_GROUPS } from "./format.js";

const GENDER_VALUES = GENDERS.map(([value]) => value);
const KINDS = {
  friendRequest: "Friend requests", friendAccepted: "Accepted friend requests", match: "Matches",
  message: "Chat messages", invitation: "Event invitations", eventChanged: "Changes to my events",
  postComment: "Comments on my clips", postVote: "Votes on my clips", moderation: "Reviews of my clips",
  sessionReminder: "Sport session reminders", sessionDeleted: "Cancelled sport sessions", digest: "Tonight's digest",
};

// Unread badge

let unread = 0;
let countedFor = null; // the access token the count was fetched with
let countedUser = null;
let listening = false;

function paint(badge) {
  badge.textContent = unread ? String(unread) : "";
  if (unread) badge.setAttribute("aria-label", `${unread} unread`); else badge.removeAttribute("aria-label");
}

function setUnread(count) {
  if (typeof count !== "number") return;
  unread = Math.max(0, count);
  document.querySelectorAll(".badge[data-unread]").forEach(paint);
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
function pager(path, render, onPage) {
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

const optional = (label, name, value, extra = {}) =>
  field(label, name, extra.type || "text", { required: false, value: value ?? "", ...extra });

/** A labelled <select> (the aria-label keeps the option text out of its name). */
function select(label, name, options, current) {
  return h("label", {}, label, h("select", { name, "aria-label": label }, options.map(([value, text]) =>
    h("option", { value, selected: String(current ?? "") === String(value) }, text))));
}

function checks(legend, name, values, chosen = [], labels = {}) {
  return h("fieldset", { class: "checks" }, h("legend", {}, legend), values.map((value) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", name, value, checked: chosen.includes(value) }),
      labels[value] || value)));
}

/** A form that runs `submit(data)` with its FormData when sent; a problem shows next to the form. */
function settingsForm(label, submit, ...children) {
  const form = h("form", { "aria-label": label, onsubmit: async (event) => {
    event.preventDefault();
    try { await submit(new FormData(form)); } catch (error) { showProblem(form, error); }
  } }, ...children);
  return form;
}

const saved = (form, text = "Saved") => {
  form.querySelector(".error")?.remove();
  toast(text);
};

/** A city search input with geocoding suggestions; a hidden input `name` holds the chosen key. */
function cityPicker(label, name, current, keyOf = (c) => c.key, show = (c) => `${c.name}, ${c.region}, ${c.countryCode}`) {
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

async function currentCity(me) {
  const here = await position();
  if (here) {
    const city = await cityAt(here);
    if (city) return city;
  }
  if (!me.homeCity) return null;
  return (await findCity(me.homeCity.split("$")[0]).catch(() => null)) || null;
}

const memberOnly = (title, text) => [h("h1", {}, title), h("p", {}, text, " ", h("a", { href: "#/start" }, "Sign up"))];
const staffOnly = (title, text) => [h("h1", {}, title), h("p", { class: "muted" }, text)];

// Inbox

/** Where a notification leads in the app, if anywhere. */
function target(n) {
  const event = n.eventId && `#/${n.eventKind === "session" ? "session" : "event"}/${enc(n.eventId)}`;
  switch (n.kind) {
    case "friendRequest": case "friendAccepted": return "#/friends";
    case "invitation": return "#/invitations";
    case "sessionReminder": return n.eventId && `#/session/${enc(n.eventId)}`;
    case "sessionDeleted": return null;
    case "eventChanged": case "digest": return event;
    default:
      if (n.conversationId) return `#/chat/${enc(n.conversationId)}`;
      if (n.postId) return `#/clip/${enc(n.postId)}`;
      return event || null;
  }
}

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
    h("div", { class: "muted small" }, KINDS[n.kind] || n.kind, " · ", h("time", { datetime: n.createdAt }, fromNow(n.createdAt))));
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
    preview.replaceChildren(me.avatarUrl ? h("img", { class: "pala-photo small", src: me.avatarUrl, alt: "Your photo" })
      : h("span", { class: "muted" }, "No photo yet"));
  };
  const input = h("input", { type: "file", accept: "image/jpeg,image/png", onchange: async () => {
    const file = input.files[0];
    try {
      store(await api("POST", "/v1/me/photo", new Blob([file], { type: file.type === "image/png" ? file.type : "image/jpeg" })));
      saved(form, "Photo saved");
    } catch (error) { showProblem(form, error); }
    input.value = "";
  } });
  const remove = actionButton("Remove photo", async () => { store(await api("DELETE", "/v1/me/photo")); saved(form, "Photo removed"); },
    { class: "secondary" });
  const form = h("form", { "aria-label": "Photo" }, h("h2", {}, "Photo"), preview, h("label", {}, "Choose a photo (JPEG or PNG)", input), remove);
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
  select("Gender", "gender", [["", "Not set"], ...GENDER_VALUES.map((g) => [g, g])], me.gender),
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
  checks("People I want to meet", "genderPreference", GENDER_VALUES, p.genderPreference),
  checks("Age groups I prefer", "preferredAgeGroups", AGE_GROUPS, p.preferredAgeGroups),
  h("button", { type: "submit" }, "Save preferences"));
  return form;
}

function notificationsForm(settings) {
  const quiet = settings.quietHours || {};
  const form = settingsForm("Notifications", async (data) => {
    const body = { muted: Object.keys(KINDS).filter((kind) => !data.getAll("kind").includes(kind)),
      timeZone: settings.timeZone || deviceZone() };
    const [start, end] = [data.get("quietStart"), data.get("quietEnd")];
    if (!!start !== !!end) throw new Error("Give quiet hours both a start and an end (or neither).");
    if (start) body.quietHours = { start, end };
    settings = await api("PUT", "/v1/me/notification-settings", body);
    saved(form, "Notification settings saved");
  },
  h("h2", {}, "Notifications"),
  checks("Notify me about", "kind", Object.keys(KINDS), Object.keys(KINDS).filter((k) => !settings.muted.includes(k)), KINDS),
  h("fieldset", { class: "quiet" }, h("legend", {}, "Quiet hours (no push, the inbox still fills)"),
    optional("From", "quietStart", quiet.start, { type: "time" }),
    optional("To", "quietEnd", quiet.end, { type: "time" })),
  h("button", { type: "submit" }, "Save notifications"));
  return form;
}

function devicesSection(devices) {
  const list = h("ul", { class: "list" }, devices.items.map((device) => {
    const item = h("li", { class: "card row" }, h("span", {}, `${device.platform} device, added ${fromNow(device.createdAt)}`),
      actionButton("Remove", async () => { await api("DELETE", `/v1/me/devices/${enc(device.token)}`); item.remove(); },
        { class: "secondary", "aria-label": `Remove ${device.platform} device added ${fromNow(device.createdAt)}` }));
    return item;
  }));
  return h("section", { "aria-label": "Devices" }, h("h2", {}, "Push devices"),
    devices.items.length ? list : h("p", { class: "muted" }, "No phones yet. Sign in on the Tonight iPhone app to get notifications there too."));
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
    forget();
  }, h("h2", {}, "Delete account"),
  h("p", { class: "muted" }, "Your profile, clips, votes and messages are deleted for good."),
  field("Current password", "password", "password", { autocomplete: "current-password", required: true }),
  h("button", { type: "submit", class: "secondary danger" }, "Delete my account"));
}

async function settingsScreen() {
  const me = await api("GET", "/v1/me");
  if (me.isAnonymous) return [...memberOnly("Me", "You are looking around as a guest."), accountActions(false)];
  const [settings, devices] = await Promise.all([
    api("GET", "/v1/me/notification-settings"), api("GET", "/v1/me/devices")]);
  const staff = me.role === "user" ? null : h("nav", { "aria-label": "Staff", class: "staff card" },
    h("a", { href: "#/moderation" }, "Moderation queue"),
    me.role === "admin" ? h("a", { href: "#/admin" }, "Promotions and ads") : null);
  return [h("h1", {}, "Settings"), staff, photoForm(me), profileForm(me), notificationsForm(settings), preferencesForm(me),
    devicesSection(devices), passwordForm(), accountActions(), deleteForm()];
}

// Moderation

function flaggedItem(post) {
  const author = shownName(post.author, post.author ? "name hidden" : post.source?.name || "imported");
  const media = post.media.kind === "video"
    ? h("video", { src: post.media.url, poster: post.media.posterUrl, controls: true, preload: "none", playsinline: true,
      "aria-label": `Flagged clip by ${author}` })
    : h("img", { src: post.media.url, alt: post.caption || `Flagged photo by ${author}` });
  const item = h("li", { class: "card flagged" });
  const done = (text) => { item.remove(); toast(text); };
  let banned = false;
  const ban = post.author ? actionButton("Ban author", async (event) => {
    if (!banned && !confirm(`Ban ${author}? Their logins end and their posts disappear until the ban is lifted.`)) return;
    await api(banned ? "DELETE" : "PUT", `/v1/moderation/users/${enc(post.author.id)}/ban`);
    banned = !banned;
    event.target.textContent = banned ? "Lift ban" : "Ban author";
    toast(banned ? `${author} is banned` : `Ban on ${author} lifted`);
  }, { class: "secondary danger" }) : null;
  item.append(media,
    h("p", {}, post.caption || h("span", { class: "muted" }, "No caption")),
    h("p", { class: "muted small" }, `By ${author}`, post.placeName ? ` at ${post.placeName}` : "",
      ` · ${fromNow(post.createdAt)} · ▲ ${post.up} ▼ ${post.down}`),
    h("div", { class: "actions" },
      actionButton("Restore", async () => { await api("POST", `/v1/moderation/posts/${enc(post.id)}/restore`); done("Restored"); }),
      actionButton("Remove", async () => {
        if (!confirm("Remove this post and its media?")) return;
        await api("POST", `/v1/moderation/posts/${enc(post.id)}/remove`);
        done("Removed");
      }, { class: "secondary" }),
      ban));
  return item;
}

async function moderationScreen() {
  const me = await api("GET", "/v1/me");
  if (me.role === "user") return staffOnly("Moderation", "Only moderators review flagged clips.");
  const empty = h("p", { class: "muted" }, "Nothing waiting for review.");
  const { list, more, load } = pager("/v1/moderation/posts?limit=20", flaggedItem);
  list.setAttribute("aria-label", "Flagged posts");
  await load();
  new MutationObserver(() => { empty.hidden = list.children.length > 0; }).observe(list, { childList: true });
  empty.hidden = list.children.length > 0;
  return [h("h1", {}, "Moderation"),
    h("p", { class: "muted" }, "Posts hidden after enough people flagged them. Restore clears the flags; Remove deletes the post."),
    empty, list, more];
}

// Administration: promotions and ads

const isoOrNothing = (value) => value ? new Date(value).toISOString() : undefined;

function venuePicker(cityKey) {
  const venue = h("select", { name: "placeId", required: true, "aria-label": "Venue" });
  let timer;
  const search = h("input", { type: "search", name: "venueSearch", autocomplete: "off", placeholder: "Venue name" });
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const q = search.value.trim();
      if (!q) return;
      const found = await api("GET", `/v1/places?q=${enc(q)}${cityKey() ? `&city=${enc(cityKey())}` : ""}&limit=20`).catch(() => ({ items: [] }));
      venue.replaceChildren(...(found.items.length ? found.items.map((p) => h("option", { value: p.id }, `${p.name}${p.address?.street ? `, ${p.address.street}` : ""}`))
        : [h("option", { value: "" }, "No venue found")]));
    }, 250);
  });
  const set = (place) => venue.replaceChildren(h("option", { value: place.id }, place.name));
  const clear = () => venue.replaceChildren(h("option", { value: "" }, "Search for a venue first"));
  clear();
  return { nodes: [h("label", {}, "Find venue", search), h("label", {}, "Venue", venue)], set, clear };
}

function promotionsSection(city) {
  const list = h("ul", { class: "list", "aria-label": "Promotions" });
  const cityForm = h("form", { "aria-label": "Hub city", class: "inline", onsubmit: (event) => { event.preventDefault(); reload(); } },
    cityPicker("City", "hubCity", city?.key), h("button", { type: "submit", class: "secondary" }, "Show"));
  const cityKey = () => cityForm.elements.hubCity.value;
  const venues = venuePicker(cityKey);
  const form = settingsForm("Promotion", async (data) => {
    const body = { tier: Number(data.get("tier")), tagline: data.get("tagline").trim() || undefined,
      startsAt: isoOrNothing(data.get("startsAt")), endsAt: isoOrNothing(data.get("endsAt")) };
    await api("PUT", `/v1/places/${enc(data.get("placeId"))}/promotion`, body);
    saved(form, "Promotion saved");
    form.reset();
    venues.clear();
    await reload();
  },
  h("h3", {}, "Promote a venue"), ...venues.nodes,
  field("Tier (higher comes first; above 0 is highlighted)", "tier", "number", { min: 0, max: 100, value: 1 }),
  optional("Tagline", "tagline", "", { maxlength: 140, placeholder: "Two-for-one until 11" }),
  optional("Starts", "startsAt", "", { type: "datetime-local" }),
  optional("Ends", "endsAt", "", { type: "datetime-local" }),
  h("button", { type: "submit" }, "Save promotion"));

  function edit(entry) {
    venues.set(entry.place);
    form.elements.tier.value = entry.tier;
    form.elements.tagline.value = entry.tagline || "";
    form.elements.tier.focus();
  }
  function item(entry) {
    const name = entry.place.name;
    return h("li", { class: `card row${entry.highlighted ? " promoted" : ""}` },
      h("div", {}, h("strong", {}, name), h("div", { class: "muted small" }, `Tier ${entry.tier}`, entry.tagline ? ` · ${entry.tagline}` : "")),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "secondary", "aria-label": `Edit promotion of ${name}`, onclick: () => edit(entry) }, "Edit"),
        actionButton("End", async () => { await api("DELETE", `/v1/places/${enc(entry.place.id)}/promotion`); toast(`${name} is no longer promoted`); await reload(); },
          { class: "secondary", "aria-label": `End promotion of ${name}` })));
  }
  async function reload() {
    if (!cityKey()) return list.replaceChildren(h("li", { class: "muted" }, "Choose a city to see its promoted venues."));
    const hub = await api("GET", `/v1/cities/${enc(cityKey())}/hub?limit=100`);
    const promoted = hub.items.filter((entry) => entry.tier > 0 || entry.tagline);
    list.replaceChildren(...(promoted.length ? promoted.map(item) : [h("li", { class: "muted" }, "No venue is promoted in this city right now.")]));
  }
  return { node: h("section", { "aria-label": "Venue promotions" }, h("h2", {}, "Venue promotions"), cityForm,
    h("p", { class: "muted small" }, "Promotions running now in the city hub (scheduled ones show once they start)."), list, form), reload };
}

function adsSection(city) {
  const list = h("ul", { class: "list", "aria-label": "Advertisements" });
  let editing = null;
  const submit = h("button", { type: "submit" }, "Create ad");
  const form = settingsForm("Advertisement", async (data) => {
    const body = { area: data.get("area").trim(), mediaUrl: data.get("mediaUrl").trim(),
      feeds: data.get("feeds").split("\n").map((f) => f.trim()).filter(Boolean),
      pages: data.get("pages").split(/[\s,]+/).filter(Boolean).map(Number), style: Number(data.get("style")) };
    await api("POST", "/v1/ads", body);
    if (editing) await api("DELETE", `/v1/ads/${enc(editing)}`); // no update in the API: replace
    saved(form, editing ? "Ad updated" : "Ad created");
    editing = null;
    submit.textContent = "Create ad";
    form.reset();
    await reload();
  },
  h("h3", {}, "New advertisement"),
  cityPicker("Area (region)", "area", city?.regionKey, (c) => c.regionKey, (c) => `${c.region}, ${c.countryCode}`),
  field("Ad page or image URL (https)", "mediaUrl", "url", { maxlength: 2000, placeholder: "https://" }),
  h("label", {}, "Feeds, one per line (a: city's all feed, p: pregame, v: venue; then a regular expression)",
    h("textarea", { name: "feeds", rows: 3, required: true, placeholder: "a:Berlin\nv:(Berghain|Watergate)" })),
  field("Pages (numbers, separated by commas)", "pages", "text", { placeholder: "1, 3", pattern: "[0-9 ,]+" }),
  select("Style", "style", [[0, "Its own page"], [1, "Overlay on a clip"]], 0),
  submit);

  function edit(ad) {
    editing = ad.id;
    form.elements.area.value = ad.area;
    form.querySelector('input[list="cities-area"]').value = ad.area.split("$").join(", ");
    form.elements.mediaUrl.value = ad.mediaUrl;
    form.elements.feeds.value = ad.feeds.join("\n");
    form.elements.pages.value = ad.pages.join(", ");
    form.elements.style.value = String(ad.style);
    submit.textContent = "Save changes";
    form.elements.mediaUrl.focus();
  }
  function item(ad) {
    const label = `ad for ${ad.area.split("$").join(", ")} created ${fromNow(ad.createdAt)}`;
    const upload = h("input", { type: "file", accept: "image/jpeg,image/png,text/html", "aria-label": `Upload creative for ${label}` });
    upload.addEventListener("change", async () => {
      if (!upload.files[0]) return;
      const body = new FormData();
      body.append("file", upload.files[0]);
      try { await api("PUT", `/v1/ads/${enc(ad.id)}/creative`, body); toast("Creative uploaded"); await reload(); }
      catch (error) { toast(error.message); }
    });
    return h("li", { class: "card ad" },
      h("div", {}, h("strong", {}, ad.area.split("$").join(", ")), " · ", ad.style === 1 ? "overlay" : "own page",
        h("div", { class: "muted small" }, `Feeds: ${ad.feeds.join("  ")} · pages ${ad.pages.join(", ") || "none"}`),
        h("a", { href: ad.mediaUrl, target: "_blank", rel: "noopener" }, "Open the ad")),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "secondary", "aria-label": `Edit ${label}`, onclick: () => edit(ad) }, "Edit"),
        actionButton("Delete", async () => {
          if (!confirm("Delete this advertisement?")) return;
          await api("DELETE", `/v1/ads/${enc(ad.id)}`);
          await reload();
        }, { class: "secondary", "aria-label": `Delete ${label}` }),
        h("label", { class: "upload" }, "Upload creative", upload)));
  }
  async function reload() {
    const ads = await api("GET", "/v1/ads");
    list.replaceChildren(...(ads.items.length ? ads.items.map(item) : [h("li", { class: "muted" }, "No advertisements yet.")]));
  }
  return { node: h("section", { "aria-label": "Advertisements section" }, h("h2", {}, "Advertisements"), list, form), reload };
}

async function adminScreen() {
  const me = await api("GET", "/v1/me");
  if (me.role !== "admin") return staffOnly("Administration", "Only admins edit promotions and ads.");
  const city = await currentCity(me);
  const promotions = promotionsSection(city);
  const ads = adsSection(city);
  await Promise.all([promotions.reload(), ads.reload()]);
  return [h("h1", {}, "Promotions and ads"), promotions.node, ads.node];
}

export const routes = { "inbox": inboxScreen, "settings": settingsScreen, "moderation": moderationScreen, "admin": adminScreen };
