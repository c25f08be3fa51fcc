// Resumable uploads (tus 1.0 on /v1/uploads), for clips sent from clubs on bad networks: the file
// goes in chunks, and after a dropped connection, a busy server or a closed tab the upload goes on
// from the server's offset instead of from the start. An upload's address is kept in localStorage
// under the file's name, size and date and the member, so choosing the same file again after a
// reload resumes it. The last chunk makes the post; its id comes back in Tonight-Post-Id.
import { api, ApiError, session, requestKey } from "./api.js";

const CHUNK = 2 * 1024 * 1024;
const TRIES = 8;
const store = window.localStorage;

const base64 = (text) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
/** The stored upload of this file with these fields (other fields make another upload). */
const keyOf = (file, fields) => {
  const text = JSON.stringify([file.name, file.size, file.lastModified || 0, Object.entries(fields).sort()]);
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return `tonight.upload.${session.user?.id}.${(hash >>> 0).toString(36)}`;
};
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One tus request through XMLHttpRequest (for the chunks' progress); answers the XHR or throws
 * ApiError (status 0: it never arrived). */
function request(method, url, headers, body, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    const token = session.tokens?.accessToken;
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.setRequestHeader("Tus-Resumable", "1.0.0");
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onProgress) xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve(xhr);
      let problem = {};
      try { problem = JSON.parse(xhr.responseText); } catch { /* HEAD answers have no body: the status says it */ }
      reject(new ApiError(problem, xhr.status));
    };
    xhr.onerror = () => reject(new ApiError({}, 0));
    xhr.send(body ?? null);
  });
}

/** Worth another try after asking the offset: lost, stale offset, another writer, damaged, busy. */
const transient = (error) => [0, 409, 423, 460].includes(error.status) || error.status >= 500;

/** Uploads `file` as a post with `fields` (the post's form fields); `onProgress(share)` from 0 to
 * 1, `onState(text)` when the network fails and when it resumes. Answers the Post. */
export async function uploadResumable(file, fields, { onProgress = () => {}, onState = () => {} } = {}) {
  const key = keyOf(file, fields);
  const uploadKey = requestKey(); // a creation retried after a lost answer finds the upload it made
  let location = store.getItem(key);
  let offset = 0, failures = 0, best = -1, postId = null, restarted = false, refreshed = false;
  // Tries in a row that moved nothing count; any progress starts the count again.
  const moved = () => { if (offset > best) { best = offset; refreshed = false; if (failures) { failures = 0; onState(""); } } };
  for (;;) {
    try {
      if (!location) {
        const metadata = Object.entries({ ...fields, filename: file.name, uploadKey })
          .filter(([, value]) => value).map(([name, value]) => `${name} ${base64(value)}`).join(",");
        const created = await request("POST", "/v1/uploads", { "Upload-Length": String(file.size), "Upload-Metadata": metadata });
        location = created.getResponseHeader("Location");
        store.setItem(key, location);
      } else {
        const state = await request("HEAD", location, {});
        offset = Number(state.getResponseHeader("Upload-Offset"));
        postId = state.getResponseHeader("Tonight-Post-Id");
        moved();
      }
      while (!postId) {
        onProgress(offset / file.size);
        const chunk = file.slice(offset, offset + CHUNK);
        const sent = await request("PATCH", location,
          { "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" },
          chunk, (loaded) => onProgress((offset + loaded) / file.size));
        offset = Number(sent.getResponseHeader("Upload-Offset"));
        postId = sent.getResponseHeader("Tonight-Post-Id");
        moved();
      }
      store.removeItem(key);
      onProgress(1);
      return await api("GET", `/v1/posts/${encodeURIComponent(postId)}`);
    } catch (error) {
      // Refreshes the session once (or ends it: 401).
      if (error.status === 401 && !refreshed) { refreshed = true; await api("GET", "/v1/me"); continue; }
      // Expired, or not on this server any more: once, start again from the first byte.
      if ([404, 410].includes(error.status) && location && !restarted) { store.removeItem(key); location = null; offset = 0; restarted = true; continue; }
      if (!transient(error) || ++failures >= TRIES) { if (!transient(error)) store.removeItem(key); throw error; }
      onState(error.status === 0 ? "Connection lost — resuming…" : "Resuming…");
      await wait(Math.min(15000, 500 * 2 ** (failures - 1))); // then the next round asks the server's offset
    }
  }
}
