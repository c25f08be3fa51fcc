// Tonight's web app: one module per seed app, each registering its screens with the router.
// It uses only /v1 and /v1/live, as an app on the Swift SDK does.
import { session } from "./api.js";
import { h } from "./ui.js";
import { register, setNav, start } from "./router.js";
import { subscribe } from "./live.js";
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

const tabs = [["hub", "Venues"], ["clips", "Clips"], ["events", "Events"], ["pala", "People"], ["sessions", "Sports"]];
const nav = document.getElementById("nav");
const tabBar = document.getElementById("tabs");

// Chat messages that arrive while the person is elsewhere: a badge on People (Pala owns the chats)
// until they open it. The inbox badge counts notifications, which an online member does not get
// for a message (the socket brings it).
let unseenChats = 0;
let listening = false;
const chatBadge = h("span", { class: "badge", "aria-label": "" });
function paintChats() {
  chatBadge.textContent = unseenChats ? String(unseenChats) : "";
  chatBadge.setAttribute("aria-label", unseenChats ? `${unseenChats} new message${unseenChats === 1 ? "" : "s"}` : "");
}

setNav((route) => {
  const signedIn = !!session.tokens;
  if (session.isMember && !listening) {
    listening = true;
    subscribe("message", ({ message }) => {
      const open = location.hash.startsWith(`#/chat/${message?.conversationId}`);
      if (!message || message.senderId === session.user?.id || open) return;
      unseenChats += 1;
      paintChats();
    });
  }
  if (route === "pala" || route === "chat") { unseenChats = 0; paintChats(); }
  nav.replaceChildren(...(signedIn ? [account.inboxLink(),
    h("a", { href: "#/settings" }, "Me"),
    h("a", { href: "#/start", onclick: (event) => { event.preventDefault(); account.signOut(); } },
      session.isMember ? "Sign out" : "Sign in")] : []));
  tabBar.replaceChildren(...(signedIn ? tabs.map(([name, label]) =>
    h("a", { href: `#/${name}`, "aria-current": route === name ? "page" : false }, label,
      name === "pala" ? chatBadge : null)) : []));
});

start(home.homeScreen);
startWorker(); // the service worker shows pushed notifications (webpush.js)
