// One WebSocket to /v1/live per tab, shared by every screen: subscribe to pushed event types.
// Reconnects with back-off and pings every 25 s so proxies keep it open.
import { session } from "./api.js";
import { enc } from "./format.js";

const listeners = new Map();
let socket = null;
let retry = 1000;
let pinger = null;

function connect() {
  const token = session.tokens?.accessToken;
  if (!token || socket) return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/v1/live?token=${enc(token)}`);
  socket.onopen = () => { retry = 1000; pinger = setInterval(() => send({ type: "ping" }), 25000); };
  socket.onmessage = (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    for (const fn of listeners.get(event.type) || []) fn(event.data || {}, event);
  };
  socket.onclose = () => {
    clearInterval(pinger);
    socket = null;
    if (session.tokens) setTimeout(connect, retry = Math.min(retry * 2, 30000));
  };
}

/** Sends a client message (e.g. `{type: "typing", conversationId}`) when connected. */
export function send(message) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

/** Calls `fn(data)` for each pushed event of `type`; returns the unsubscribe function. */
export function subscribe(type, fn) {
  connect();
  if (!listeners.has(type)) listeners.set(type, new Set());
  listeners.get(type).add(fn);
  return () => listeners.get(type).delete(fn);
}

/** Closes the socket (sign-out); the next subscribe opens a new one with the new token. */
export function disconnect() { const s = socket; socket = null; s?.close(); }

/** Whether the socket is open and authenticated (tests wait for it). */
export function isOpen() { return socket?.readyState === WebSocket.OPEN; }
