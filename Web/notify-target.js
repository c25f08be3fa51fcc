// Where a notification leads in the web app: shared by the inbox (account.js) and the service
// worker (sw.js, which opens a pushed notification's screen), so nothing here touches the DOM.

const enc = encodeURIComponent;

/** The screen of a notification (`kind`, `eventId`, `eventKind`, `conversationId`, `postId`) as a
 * hash such as "#/friends", or null when it leads nowhere. */
export function target(n) {
  const event = n.eventId && `#/${n.eventKind === "session" ? "session" : "event"}/${enc(n.eventId)}`;
  switch (n.kind) {
    case "friendRequest": case "friendAccepted": return "#/friends";
    case "invitation": return "#/invitations";
    case "sessionReminder": return n.eventId ? `#/session/${enc(n.eventId)}` : null;
    case "sessionDeleted": return null;
    case "eventChanged": case "digest": return event || null;
    default:
      if (n.conversationId) return `#/chat/${enc(n.conversationId)}`;
      if (n.postId) return `#/clip/${enc(n.postId)}`;
      return event || null;
  }
}
