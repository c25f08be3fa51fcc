// Tonight's web app: one module per seed app, each registering its screens with the router.
// It uses only /v1 and /v1/live, as an app on the Swift SDK does.
import { api, session } from "./api.js";
import { h, setSignUpPrompt } from "./ui.js";
import { register, routeOf, setNav, start } from "./router.js";
import { subscribe } from "./live.js";
import { target } from "./notify-target.js";
import { plural } from "./format.js";
import { startWorker } from "./webpush.js";
import * as home from "./start.js";
import * as partyup from "./partyup.js";
import * as dance from "./dance.js";
import * as tickets from "./events.js";
import * as pala from "./pala.js";
import * as playmate from "./playmate.js";
import * as account from "./account.js";
import * as email from "./email.js";

for (const module of [home, partyup, dance, tickets, pala, playmate, account, email]) register(module.routes, module.signedOutRoutes);
setSignUpPrompt(home.signUpPrompt); // the sign-up dialog of requireMember (ui.js) holds the start screen's form

const tabs = [["hub", "Venues"], ["clips", "Clips"], ["events", "Events"], ["pala", "People"], ["sessions", "Sports"]];
const nav = document.getElementById("nav");
const tabBar = document.getElementById("tabs");

// Badges on the tab that owns something new, until the person opens that tab (any screen of its
// app): a chat message arriving elsewhere on People (Pala owns the chats), and a notification on the
// app of the screen it leads to (notify-target.js) — a session, an invitation or a friend request
// on Sports, a show or a party on Events, a comment on a clip on Clips, a match on People. The
// header's inbox badge counts the notifications too; an online member gets no notification for a
// message (the socket brings the message itself). The badges outlive a reload: they come back from
// the unread notifications and chats newer than the last time their tab was open on this device
// (kept in localStorage), and "Mark all read" (no unread left) clears the notifications' ones.
const owner = {}; // route → the tab of its app
for (const [module, tab] of [[partyup, "hub"], [dance, "clips"], [tickets, "events"], [pala, "pala"], [playmate, "sessions"]]) {
  for (const route of Object.keys(module.routes)) owner[route] = tab;
}
let here = "";
let listening = false;
let counting = null; // whose news the badges count
const nothing = () => ({ messages: 0, notices: new Set() }); // new messages; the ids of new notifications
const fresh = Object.fromEntries(tabs.map(([name]) => [name, nothing()]));
const badges = Object.fromEntries(tabs.map(([name]) => [name, h("span", { class: "badge", "aria-label": "" })]));
function paintBadge(tab) {
  const { messages, notices: { size: notices } } = fresh[tab];
  badges[tab].textContent = messages + notices ? String(messages + notices) : "";
  badges[tab].setAttribute("aria-label", [messages && plural(messages, "new message"), notices && plural(notices, "new notification")]
    .filter(Boolean).join(", "));
}
function clear(tab) { fresh[tab] = nothing(); paintBadge(tab); }
/** `messages` new messages, or the notification `notice`, new for `tab`, unless the person is in that app already. */
function arrived(tab, notice = null, messages = 1) {
  if (!tab || owner[here] === tab) return;
  if (notice) fresh[tab].notices.add(notice.id); else fresh[tab].messages += messages;
  paintBadge(tab);
}
/** The tab owning a notification: that of the screen it leads to (a cancelled session: Sports). */
const noticeTab = (notice) => owner[routeOf(target(notice) || "")] || (notice.eventKind === "session" ? "sessions" : null);

/** When each tab was last open on this device, for the signed-in member: { tab: ms }. */
const seenKey = () => `tonight.tabsSeen.${session.user?.id}`;
function seenTimes() { try { return JSON.parse(localStorage.getItem(seenKey())) || {}; } catch { return {}; } }
function stamp(tab) {
  if (tab && session.isMember) localStorage.setItem(seenKey(), JSON.stringify({ ...seenTimes(), [tab]: Date.now() }));
}
addEventListener("pagehide", () => stamp(owner[here]));
/**
 * The badges of news that came after its tab was last open (after a reload): unread notifications,
 * and the unread messages of each chat whose latest message came after People was last open.
 */
async function restore(user) {
  const [page, chats] = await Promise.all([
    api("GET", "/v1/notifications?unread=true&limit=50").catch(() => null),
    api("GET", "/v1/conversations?limit=50").catch(() => null)]);
  if (counting !== user) return;
  const seen = seenTimes();
  // The server's times are in whole seconds: news of the second the tab was left counts as new.
  const since = (createdAt, tab) => Date.parse(createdAt) >= Math.floor((seen[tab] || 0) / 1000) * 1000;
  for (const notice of page?.items || []) {
    const tab = notice.kind !== "message" && noticeTab(notice);
    if (tab && since(notice.createdAt, tab)) arrived(tab, notice);
  }
  // A message that came while the chats were read may be in them and on the socket too: the
  // badge takes the larger count, not both.
  let unread = 0;
  for (const chat of chats?.items || []) {
    const last = chat.lastMessage;
    if (chat.unreadCount > 0 && last && last.senderId !== user && since(last.createdAt, "pala")) unread += chat.unreadCount;
  }
  if (unread > fresh.pala.messages) arrived("pala", null, unread - fresh.pala.messages);
}
account.onUnread((count) => { if (!count) for (const [name] of tabs) { fresh[name].notices.clear(); paintBadge(name); } });

setNav((route) => {
  const signedIn = !!session.tokens;
  const opened = owner[route];
  if (owner[here] !== opened) stamp(owner[here]); // left a tab: seen until now
  here = route;
  if (session.user?.id !== counting) { // another person signed in: their news only
    counting = session.user?.id;
    tabs.forEach(([name]) => clear(name));
    if (session.isMember) restore(counting);
  }
  if (session.isMember && !listening) {
    listening = true;
    subscribe("message", ({ message }) => { if (message && message.senderId !== session.user?.id) arrived("pala"); });
    subscribe("notification", ({ notification }) => {
      if (notification && notification.kind !== "message") arrived(noticeTab(notification), notification);
    });
  }
  if (opened) { stamp(opened); clear(opened); }
  nav.replaceChildren(...(signedIn ? [account.inboxLink(),
    h("a", { href: "#/settings" }, "Me"),
    h("a", { href: "#/start", onclick: (event) => { event.preventDefault(); account.signOut(); } },
      session.isMember ? "Sign out" : "Sign in")] : []));
  tabBar.replaceChildren(...(signedIn ? tabs.map(([name, label]) =>
    h("a", { href: `#/${name}`, "aria-current": route === name ? "page" : false }, label,
      badges[name])) : []));
});

start(home.homeScreen);
startWorker(); // the service worker shows pushed notifications (webpush.js)
