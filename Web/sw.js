// The service worker, served at /sw.js with the whole site as its scope (webpush.js registers it
// on load, as a module worker): it shows the notifications the server pushes and opens a tapped
// one's screen, in an open window of the app if there is one. It caches nothing.
import { target } from "/app/notify-target.js";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

// The payload: {title, body, tag, notification: {id, kind, eventId, eventKind, …}}.
self.addEventListener("push", (event) => {
  let data = {};
  try { data = event.data?.json() || {}; } catch { data = { body: event.data?.text() || "" }; }
  const note = data.notification || {};
  event.waitUntil(self.registration.showNotification(data.title || "Tonight", {
    body: data.body || "", tag: data.tag || note.id, icon: "/app/icon-192.png",
    data: { url: `/${target(note) || "#/inbox"}` },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || "/#/inbox", self.location.origin);
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const app = windows.find((client) => new URL(client.url).pathname === "/");
    if (!app) return self.clients.openWindow(url.href);
    try { await app.focus(); } catch { /* focusing may be refused; the screen still changes */ }
    // The app's router moves to the screen (webpush.js listens): no reload of the page.
    app.postMessage({ type: "open", hash: url.hash });
  })());
});
