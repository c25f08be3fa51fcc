// Posting a clip (PartyUP's submission, the dance app's creation screen): a file or a camera
// recording, caption, tags, song, and where it goes — a nearby venue's feed or the city's pregame
// feed. The upload is resumable (tus.js: chunks that survive a dropped connection or a reload, with
// progress); then the post is polled until the server has processed it (ready) or refused it
// (failed, with the reason).
import { api, ApiError, session } from "./api.js";
import { uploadResumable } from "./tus.js";
import { h, toast, showProblem, field } from "./ui.js";
import { go, onLeave, params } from "./router.js";
import { locate } from "./city.js";
import { enc, distance } from "./format.js";

/** The API's field names as the form labels them. */
const LABELS = { media: "Video or photo", caption: "Caption", tags: "Tags", songTitle: "Song title",
  songArtist: "Song artist", songUri: "Spotify link", placeId: "Where", city: "Where" };

/** `spotify:track:<id>` from an open.spotify.com track link or a Spotify URI; "" when empty, null when neither. */
export function spotifyUri(text) {
  const value = text.trim();
  if (!value) return "";
  const match = value.match(/^spotify:track:([A-Za-z0-9]{22})$/)
    || value.match(/^(?:https?:\/\/)?open\.spotify\.com\/(?:intl-[a-z-]+\/)?track\/([A-Za-z0-9]{22})(?:[/?#].*)?$/i);
  return match ? `spotify:track:${match[1]}` : null;
}

const problem = (fields, status = 400) => new ApiError({ detail: "Please check the form.", errors: fields }, status);
const relabel = (error) => error instanceof ApiError && error.fields.length
  ? problem(error.fields.map((f) => ({ field: LABELS[f.field] || f.field, message: f.message })), error.status) : error;

/** The camera recorder: "Record with camera" starts (and, pressed again, stops); the clip goes to `done(file)`. */
function recorder(done) {
  if (!navigator.mediaDevices?.getUserMedia || !window.MediaRecorder) {
    return h("p", { class: "muted" }, "Recording needs a browser with camera access — choose a file instead.");
  }
  const preview = h("video", { class: "pu-preview", muted: true, playsinline: true, hidden: true, "aria-label": "Camera preview" });
  const status = h("span", { class: "muted", role: "status" });
  let recording = null, stream = null, timer = null, started = 0;
  const release = () => {
    stream?.getTracks().forEach((track) => track.stop());
    stream = null; recording = null; clearTimeout(timer);
    preview.hidden = true; preview.srcObject = null;
    record.setAttribute("aria-pressed", "false"); stop.hidden = true;
  };
  const finish = () => { if (recording?.state === "recording") recording.stop(); };
  const begin = async () => {
    try { stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: true }); } catch (error) {
      return toast(error.name === "NotAllowedError" ? "Tonight may not use the camera. Allow it, or choose a file instead."
        : "The camera is not available. Choose a file instead.");
    }
    const type = ["video/mp4", "video/webm;codecs=vp8,opus", "video/webm"].find((t) => MediaRecorder.isTypeSupported(t));
    const chunks = [];
    recording = new MediaRecorder(stream, type ? { mimeType: type } : {});
    recording.ondataavailable = (event) => { if (event.data.size) chunks.push(event.data); };
    recording.onstop = () => {
      const blob = new Blob(chunks, { type: recording.mimeType || "video/webm" });
      const seconds = Math.round((Date.now() - started) / 1000);
      release();
      done(new File([blob], `recording.${blob.type.includes("mp4") ? "mp4" : "webm"}`, { type: blob.type }));
      status.textContent = `Recorded a ${seconds} s clip.`;
    };
    preview.srcObject = stream; preview.hidden = false; preview.play().catch(() => {});
    recording.start(); started = Date.now();
    record.setAttribute("aria-pressed", "true"); stop.hidden = false;
    status.textContent = "Recording… (up to 60 s)";
    timer = setTimeout(finish, 60000);
  };
  const record = h("button", { type: "button", class: "secondary", "aria-pressed": "false",
    onclick: () => (recording ? finish() : begin()) }, "Record with camera");
  const stop = h("button", { type: "button", hidden: true, onclick: finish }, "Stop recording");
  onLeave(() => { if (recording) recording.onstop = null; finish(); release(); });
  return h("div", { class: "pu-recorder" }, record, " ", stop, " ", status, preview);
}

/** The "Where" options: nearby places by distance (or the city's), the given one, and pregame. */
async function whereOptions(where, placeId) {
  const query = where.near ? `near=${where.near}&radius=5000` : where.cityKey ? `city=${enc(where.cityKey)}` : null;
  // Clips are filmed at nightlife venues: sports spots belong to Playmate.
  const places = query ? (await api("GET", `/v1/places?${query}&group=nightlife&limit=40`)).items : [];
  if (placeId && !places.some((p) => p.id === placeId)) places.unshift(await api("GET", `/v1/places/${enc(placeId)}`));
  return [...places.map((p) => h("option", { value: p.id, selected: p.id === placeId },
    p.distanceMeters != null ? `${p.name} · ${distance(p.distanceMeters)}` : p.name)),
  h("option", { value: "", selected: !placeId }, "No venue (pregame)")];
}

/** Polls the post every second until it is ready or failed; stops when the screen is left. */
function processing(post, box) {
  const feed = post.placeId ? `#/venue/${enc(post.placeId)}` : "#/pregame";
  const status = h("p", { role: "status", class: "pu-state" }, "Processing…");
  const actions = h("p", { class: "pu-links" });
  box.append(status, actions);
  let timer = null;
  onLeave(() => clearTimeout(timer));
  const check = async () => {
    try { post = await api("GET", `/v1/posts/${enc(post.id)}`); } catch (error) { toast(error.message); }
    if (post.status === "ready") {
      status.textContent = "Ready";
      actions.append(h("a", { href: `#/clip/${enc(post.id)}`, class: "button" }, "Open clip"), " ",
        h("a", { href: feed, class: "button" }, "Venue feed"));
    } else if (post.status === "failed") {
      status.remove();
      box.append(h("p", { class: "error", role: "alert" }, `Processing failed: ${post.failureReason || "the file could not be read"}`));
    } else timer = setTimeout(check, 1000);
  };
  timer = setTimeout(check, 1000);
}

/** "Find a song": songs from /v1/songs/search as the person types (Spotify when configured, else
 * the songs already on Tonight's posts); choosing one fills the title, artist and link. */
function songSearch() {
  const results = h("ul", { class: "list song-results", "aria-label": "Songs found" });
  let timer = null;
  let asked = "";
  const input = h("input", { type: "search", name: "songQuery", autocomplete: "off", maxlength: 200,
    placeholder: "Title or artist", oninput: () => { clearTimeout(timer); timer = setTimeout(find, 250); } });
  const choose = (song) => () => {
    const fields = input.form.elements;
    fields.songTitle.value = song.title;
    fields.songArtist.value = song.artist || "";
    fields.songUri.value = song.url || song.uri || "";
    input.value = "";
    results.replaceChildren();
    fields.songTitle.focus();
  };
  async function find() {
    const q = input.value.trim();
    asked = q;
    if (q.length < 2) return results.replaceChildren();
    const page = await api("GET", `/v1/songs/search?q=${enc(q)}&limit=5`).catch(() => ({ items: [] }));
    if (asked !== q) return; // a later search owns the list
    results.replaceChildren(...(page.items.length ? page.items.map((song) => h("li", {},
      h("button", { type: "button", class: "secondary", onclick: choose(song) },
        song.artist ? `${song.title} — ${song.artist}` : song.title)))
      : [h("li", { class: "muted" }, "No song found — type its title and artist below.")]));
  }
  return [h("label", {}, "Find a song", input), results];
}

/** The post's fields from the form (throws a field problem for a bad Spotify link). */
function postFields(form, file, cityKey) {
  const values = Object.fromEntries(new FormData(form));
  const songUri = spotifyUri(values.songUri || "");
  if (songUri === null) throw problem([{ field: "Spotify link", message: "paste an open.spotify.com/track link or a spotify:track: URI" }]);
  if (!file) throw problem([{ field: "Video or photo", message: "choose a file or record a clip" }]);
  if (!values.where && !cityKey) throw problem([{ field: "Where", message: "we don't know your city; pick a venue" }]);
  const tags = (values.tags || "").split(/[\s,]+/).map((t) => t.replace(/^#+/, "")).filter(Boolean).join(",");
  const fields = values.where ? { placeId: values.where } : { city: cityKey };
  for (const [name, value] of [["caption", values.caption], ["tags", tags], ["songTitle", values.songTitle],
    ["songArtist", values.songArtist], ["songUri", songUri]]) if (value?.trim()) fields[name] = value.trim();
  return fields;
}

async function postScreen() {
  const title = h("h1", {}, "Post a clip");
  if (!session.isMember) return [title, h("p", {}, "Sign up to post clips — it takes ten seconds. ", h("a", { href: "#/start", class: "button" }, "Sign up"))];
  const where = await locate();
  let recorded = null;
  const file = h("input", { type: "file", accept: "video/*,image/*", onchange: () => { recorded = null; } });
  const place = params().get("place");
  const form = h("form", { "aria-label": "Post a clip", class: "pu-post", onsubmit: async (event) => {
    event.preventDefault();
    const submit = form.querySelector("button[type=submit]");
    try {
      const media = file.files[0] || recorded;
      const fields = postFields(form, media, where.cityKey);
      submit.disabled = true;
      const progress = h("progress", { class: "pu-progress", max: "100", value: "0", "aria-label": "Upload progress" });
      const state = h("p", { class: "muted", role: "status" });
      const box = h("section", { class: "card", "aria-label": "Your clip" }, h("p", {}, "Uploading…"), progress, state);
      form.after(box);
      let post;
      try {
        post = await uploadResumable(media, fields, {
          onProgress: (share) => { progress.value = Math.round(share * 100); },
          onState: (text) => { state.textContent = text; },
        });
      } catch (error) { box.remove(); throw error; }
      progress.value = 100;
      box.firstChild.textContent = "Uploaded";
      form.hidden = true;
      form.querySelector(".error")?.remove();
      box.scrollIntoView({ block: "nearest" });
      processing(post, box);
      box.append(h("button", { type: "button", class: "secondary", onclick: () => go(location.hash) }, "Post another"));
    } catch (error) {
      if (error.status === 401) { session.tokens = null; toast("Your session ended — please sign in again."); return go("#/start"); }
      showProblem(form, relabel(error));
    } finally { submit.disabled = false; }
  } },
  h("label", {}, "Video or photo", file),
  recorder((clip) => { recorded = clip; file.value = ""; }),
  field("Caption", "caption", "text", { required: false, maxlength: 500, placeholder: "What's it like right now?" }),
  field("Tags", "tags", "text", { required: false, placeholder: "#techno rooftop" }),
  ...songSearch(),
  field("Song title", "songTitle", "text", { required: false, maxlength: 200 }),
  field("Song artist", "songArtist", "text", { required: false, maxlength: 200 }),
  field("Spotify link", "songUri", "text", { required: false, inputmode: "url", placeholder: "https://open.spotify.com/track/…" }),
  h("label", {}, "Where", h("select", { name: "where" }, await whereOptions(where, place))),
  h("button", { type: "submit" }, "Post"));
  return [title, form];
}

export const routes = { post: postScreen };
