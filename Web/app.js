// Tonight's web app: one module per seed app, each registering its screens with the router.
// It uses only /v1 and /v1/live, as an app on the Swift SDK does.
import { session } from "./api.js";
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
// message (the socket brings the message itself).
const owner = {}; // route → the tab of its app
for (const [module, tab] of [[partyup, "hub"], [dance, "clips"], [tickets, "events"], [pala, "pala"], [playmate, "sessions"]]) {
  for (const route of Object.keys(module.routes)) owner[route] = tab;
}
let here = "";
let listening = false;
let counting = null; // whose news the badges count
const fresh = Object.fromEntries(tabs.map(([name]) => [name, { messages: 0, notices: 0 }]));
const badges = Object.fromEntries(tabs.map(([name]) => [name, h("span", { class: "badge", "aria-label": "" })]));
function paintBadge(tab) {
  const { messages, notices } = fresh[tab];
  badges[tab].textContent = messages + notices ? String(messages + notices) : "";
  badges[tab].setAttribute("aria-label", [messages && plural(messages, "new message"), notices && plural(notices, "new notification")]
    .filter(Boolean).join(", "));
}
/** Counts something new for `tab`, unless the person is in that app already. */
function arrived(tab, what) {
  if (!tab || owner[here] === tab) return;
  fresh[tab][what] += 1;
  paintBadge(tab);
}
/** The tab owning a notification: that of the screen it leads to (a cancelled session: Sports). */
const noticeTab = (notice) => owner[routeOf(target(notice) || "")] || (notice.eventKind === "session" ? "sessions" : null);

setNav((route) => {
  const signedIn = !!session.tokens;
  here = route;
  if (session.user?.id !== counting) { // another person signed in: their news only
    counting = session.user?.id;
    for (const [name] of tabs) { fresh[name] = { messages: 0, notices: 0 }; paintBadge(name); }
  }
  if (session.isMember && !listening) {
    listening = true;
    subscribe("message", ({ message }) => { if (message && message.senderId !== session.user?.id) arrived("pala", "messages"); });
    subscribe("notification", ({ notification }) => {
      if (notification && notification.kind !== "message") arrived(noticeTab(notification), "notices");
    });
  }
  const opened = owner[route];
  if (opened && fresh[opened].messages + fresh[opened].notices) { fresh[opened] = { messages: 0, notices: 0 }; paintBadge(opened); }
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
