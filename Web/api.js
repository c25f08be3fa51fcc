// The public API, exactly as the SDK uses it: /v1 with bearer tokens (kept in localStorage),
// refreshed once when the server says the access token expired; problems become ApiError, whose
// message is for people (format.js's problemText), and so do network failures (status 0).
import { enc, problemText } from "./format.js";

const store = window.localStorage;

/** A refused or failed request: `message` in words for people, `status` (0: never arrived), `code` and `fields`. */
export class ApiError extends Error {
  constructor(problem, status) {
    super(problemText(problem, status));
    this.status = status;
    this.code = problem.code;
    this.fields = problem.errors || [];
  }
}

/** What runs when the tokens are forgotten (session.onForget). */
const forgetting = [];

export const session = {
  get tokens() { try { return JSON.parse(store.getItem("tonight.tokens")) || null; } catch { return null; } },
  set tokens(value) {
    const ended = !value && store.getItem("tonight.tokens") !== null;
    value ? store.setItem("tonight.tokens", JSON.stringify(value)) : store.removeItem("tonight.tokens");
    if (ended) for (const fn of forgetting) { try { fn(); } catch { /* one cleanup never stops the others */ } }
  },
  get user() { return this.tokens?.user || null; },
  get isMember() { return !!this.user && !this.user.isAnonymous; },
  /** Runs `fn` each time the tokens held are forgotten, however the session ended: signing out, a
   * refused refresh (a password reset or "sign out everywhere" elsewhere), a deleted account, a 401.
   * A callback, so that api.js imports none of the modules that clean up (webpush.js imports it). */
  onForget(fn) { forgetting.push(fn); },
};

/** `path` with `limit` and `cursor` added to its query, each only when given. */
export function pagePath(path, { limit, cursor } = {}) {
  const query = [limit ? `limit=${limit}` : "", cursor ? `cursor=${enc(cursor)}` : ""].filter(Boolean).join("&");
  return query ? `${path}${path.includes("?") ? "&" : "?"}${query}` : path;
}

/** A fresh id that makes a retried request count once (Idempotency-Key, a message's clientId). */
export const requestKey = () => crypto.randomUUID?.() || `${Date.now()}-${Math.random().toString(36).slice(2)}`;

let refreshing = null;

async function refresh() {
  const tokens = session.tokens;
  if (!tokens?.refreshToken) return false;
  refreshing ??= fetch("/v1/auth/refresh", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ refreshToken: tokens.refreshToken }),
  }).then(async (r) => {
    if (!r.ok) { session.tokens = null; return false; }
    session.tokens = await r.json();
    return true;
  }, () => { throw new ApiError({}, 0); }).finally(() => { refreshing = null; });
  return refreshing;
}

/** Calls the API; `body` is sent as JSON (or as is for FormData, and as its own type for a Blob). */
export async function api(method, path, body, { retry = true } = {}) {
  const headers = {};
  const token = session.tokens?.accessToken;
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body instanceof Blob) { headers["Content-Type"] = body.type; payload = body; }
  else if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  let response;
  try { response = await fetch(path, { method, headers, body: payload }); } catch { throw new ApiError({}, 0); }
  if (response.status === 401 && retry && token && (await refresh())) return api(method, path, body, { retry: false });
  if (response.status === 204) return null;
  const type = response.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await response.json().catch(() => ({})) : await response.text();
  // A page that is not a problem (a proxy's, say) says nothing to people: its status does.
  if (!response.ok) throw new ApiError(typeof data === "object" && data ? data : {}, response.status);
  return data;
}
