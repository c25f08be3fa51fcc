// Dance clips: the feeds (following, explore, a tag) as full-screen reels or a grid, a clip's
// detail (video, song on Spotify, like, bookmark, comments, tutorial mode with mirror, speed,
// section loop and beat counter), profiles with follow, people search and bookmarks. Posting
// lives in post.js (#/post).
import { api, session, pagePath } from "./api.js";
import { h, toast, showProblem, requireMember, actionButton, split, avatar } from "./ui.js";
import { go, onLeave, params } from "./router.js";
import { enc, plural, shownName, fromNow, cityName, label, POST_STATUSES } from "./format.js";

const who = (author) => shownName(author, "A dancer");
const songText = (song) => song.artist ? `${song.title} — ${song.artist}` : song.title;
const tagHref = (tag) => `#/clips?tag=${enc(tag.toLowerCase())}`;

/** The author's name, linking to their profile when it is shown. */
function authorLink(author) {
  return author?.username ? h("a", { href: `#/user/${enc(author.username)}` }, who(author)) : h("span", {}, who(author));
}

function clipCard(post) {
  const media = post.media || {};
  const poster = media.posterUrl || (media.kind === "image" ? media.url : null);
  return h("li", { class: "card clip" },
    h("a", { href: `#/clip/${enc(post.id)}`, class: "clip-open" },
      poster ? h("img", { src: poster, alt: "", loading: "lazy" })
        : h("span", { class: "clip-poster", "aria-hidden": "true" }, post.status === "ready" ? "▶" : "…"),
      h("span", { class: "clip-caption" }, post.caption || "Untitled clip")),
    h("div", { class: "muted small" }, authorLink(post.author), ` · ♥ ${post.up}`),
    post.song ? h("div", { class: "muted small" }, `♪ ${songText(post.song)}`) : null,
    post.status !== "ready" ? h("span", { class: "badge" }, label(POST_STATUSES, post.status)) : null);
}

/** A grid of clips from a feed path, with a "More clips" button while there are more pages. */
async function feedList(path, empty, first) {
  const list = h("ul", { class: "list clips" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "More clips");
  let cursor = null;
  const show = (page) => { list.append(...page.items.map(clipCard)); cursor = page.nextCursor; more.hidden = !cursor; return page; };
  const load = async () => show(await api("GET", pagePath(path, { limit: 20, cursor })));
  more.addEventListener("click", () => load().catch((error) => toast(error.message)));
  const page = first ? show(first) : await load();
  return page.items.length ? [list, more] : [h("p", { class: "muted" }, empty)];
}

function feedTabs(current, tag) {
  const link = (label, href, on) => h("a", { href, class: "pill", "aria-current": on ? "page" : false }, label);
  const tagForm = h("form", { class: "inline", role: "search", "aria-label": "Find a tag", onsubmit: (event) => {
    event.preventDefault();
    const value = new FormData(event.target).get("tag").replace(/^#/, "").trim();
    if (value) go(tagHref(value));
  } }, h("label", {}, "Tag", h("input", { name: "tag", type: "search", value: tag || "", placeholder: "salsa" })),
    h("button", { type: "submit", class: "secondary" }, "Show tag"));
  return [h("nav", { class: "feed-tabs", "aria-label": "Feeds" },
    link("Following", "#/clips?feed=following", current === "following"),
    link("Explore", "#/clips?feed=explore", current === "explore"),
    tag ? link(`#${tag}`, tagHref(tag), true) : null), tagForm];
}

const VIEW = "tonight.clips.view";
/** How the feeds show: "reel" (full-screen clips, the default) or "grid", as chosen on this device. */
const feedView = () => localStorage.getItem(VIEW) === "grid" ? "grid" : "reel";

/** Reel / Grid: remembers the choice and shows the feed again that way. */
function viewToggle(view) {
  const button = (value, text) => h("button", { type: "button", class: "secondary", "aria-pressed": String(view === value),
    onclick: () => { localStorage.setItem(VIEW, value); go(location.hash); } }, text);
  return h("div", { class: "view-toggle", role: "group", "aria-label": "View" }, button("reel", "Reel"), button("grid", "Grid"));
}

/** What a clip's shade in the reel shows: author, caption (opening the clip), song, tags, like, comments. */
function reelClip(post) {
  const open = `#/clip/${enc(post.id)}`;
  return { label: `Clip by ${who(post.author)}${post.caption ? `: ${post.caption}` : ""}`, info: [
    h("p", {}, authorLink(post.author), " ", h("span", { class: "muted" }, fromNow(post.createdAt))),
    h("a", { href: open, class: "reel-caption" }, post.caption || "Untitled clip"),
    post.song ? h("p", { class: "small" }, `♪ ${songText(post.song)}`) : null,
    post.tags.length ? h("p", { class: "tags" }, post.tags.map((t) => h("a", { href: tagHref(t), class: "pill" }, `#${t}`))) : null,
    engagement(post, open)] };
}

/** #/clips — following, explore (trending) or a tag's clips, as a reel (Web/reel.js) or a grid. */
export async function clipsScreen() {
  const query = params();
  const tag = query.get("tag")?.replace(/^#/, "").trim().toLowerCase() || null;
  const feed = tag ? "tag" : query.get("feed") || (session.isMember ? "following" : "explore");
  const me = session.user;
  const view = feedView();
  const title = h("h1", {}, tag ? `#${tag}` : "Dance clips");
  const toggle = viewToggle(view);
  const links = [h("a", { href: "#/post", class: "button" }, "Post a clip"),
    h("a", { href: "#/people" }, "Find people"), h("a", { href: "#/bookmarks" }, "Bookmarks"),
    session.isMember ? h("a", { href: `#/user/${enc(me.username)}` }, "My clips") : null];
  const [tabs, tagForm] = feedTabs(feed, tag);
  const header = [h("div", { class: "clips-top" }, title, toggle), h("p", { class: "actions links" }, links), tabs, tagForm];
  if (feed === "following" && !session.isMember) {
    return [...header, h("p", {}, h("a", { href: "#/start" }, "Sign up"), " to follow dancers and see their clips here.")];
  }
  const path = tag ? `/v1/tags/${enc(tag)}/posts` : feed === "following" ? "/v1/feeds/following" : "/v1/feeds/trending";
  const empty = tag ? "No clips with this tag yet." : feed === "following"
    ? "No clips from people you follow yet — find dancers in Explore or Find people." : "No clips yet.";
  if (view === "reel") {
    const { reel } = await import("./reel.js");
    return reel(path, reelClip, { aside: clipSide, empty: h("p", {}, empty), head: [h("div", { class: "reel-top" }, title),
      h("div", { class: "reel-chips" }, tabs, toggle, links, h("details", {}, h("summary", {}, "Find a tag"), tagForm))] });
  }
  return [...header, h("h2", { class: "visually-hidden" }, tag ? "Tagged clips" : feed === "following" ? "Following" : "Explore"),
    ...(await feedList(path, empty))];
}

/** Beside the reel on a wide screen: the clip on screen's dancer, caption, song, a link to its page
 * (tutorial mode) and its comments. */
async function clipSide(post) {
  if (!post) return h("p", { class: "muted" }, "The clip on screen shows here with its comments.");
  return [h("h2", {}, "About this clip"),
    h("p", { class: "clip-by" }, avatar(post.author), authorLink(post.author), h("span", { class: "muted" }, ` · ${fromNow(post.createdAt)}`)),
    post.caption ? h("p", { class: "caption" }, captionNodes(post.caption)) : null,
    post.song ? songBlock(post.song) : null,
    h("p", {}, h("a", { href: `#/clip/${enc(post.id)}`, class: "button" }, "Open the clip · tutorial mode")),
    await commentsSection(post)];
}

/** Caption text with each #tag as a link to its feed. */
function captionNodes(text) {
  return text.split(/(#[\p{L}\p{N}_]+)/u).map((part) =>
    part.startsWith("#") && part.length > 1 ? h("a", { href: tagHref(part.slice(1)) }, part) : part);
}

function songBlock(song) {
  const url = song.url || `https://open.spotify.com/search/${enc(songText(song))}`;
  return h("p", { class: "song" }, h("span", {}, `♪ ${songText(song)} `),
    h("a", { href: url, target: "_blank", rel: "noopener", class: "spotify" }, "Open in Spotify"));
}

/** A toggle button with a constant name and aria-pressed state. */
function toggleButton(label, pressed, action) {
  const button = h("button", { type: "button", class: "secondary toggle", "aria-pressed": String(pressed) }, label);
  button.addEventListener("click", async () => {
    if (!requireMember()) return;
    try { button.setAttribute("aria-pressed", String(await action(button.getAttribute("aria-pressed") !== "true"))); }
    catch (error) { toast(error.message); }
  });
  return button;
}

/** Like (with the count), bookmark and, on one's own clip, delete; in the reel (`open`: the clip's
 * link) a link to its comments instead of delete. */
function engagement(post, open = null) {
  const mine = session.user && post.author?.id === session.user.id;
  const count = h("span", { class: "like-count" }, plural(post.up, "like"));
  const like = mine ? null : toggleButton("Like", post.myVote === 1, async (on) => {
    const state = await api("PUT", `/v1/posts/${enc(post.id)}/vote`, { value: on ? 1 : 0 });
    count.textContent = plural(state.up, "like");
    return state.value === 1;
  });
  const bookmark = toggleButton("Bookmark", !!post.bookmarked, async (on) => {
    await api(on ? "PUT" : "DELETE", `/v1/posts/${enc(post.id)}/bookmark`);
    toast(on ? "Saved to your bookmarks" : "Bookmark removed");
    return on;
  });
  const remove = mine && !open ? actionButton("Delete clip", async () => {
    if (!window.confirm("Delete this clip?")) return;
    await api("DELETE", `/v1/posts/${enc(post.id)}`);
    go(`#/user/${enc(session.user.username)}`);
  }, { class: "secondary" }) : null;
  const comments = open ? h("a", { href: open, class: "reel-comments" }, `Comments (${post.comments})`) : null;
  return h("div", { class: "actions" }, like, count, comments, bookmark, remove);
}

async function commentsSection(post) {
  const me = session.user;
  const page = await api("GET", `/v1/posts/${enc(post.id)}/comments?limit=100`);
  const list = h("ul", { class: "list comments", "aria-label": "Comments" });
  const canDelete = (c) => session.isMember && (c.author?.id === me.id || post.author?.id === me.id || ["moderator", "admin"].includes(me.role));
  const item = (c) => {
    const li = h("li", { class: "comment" }, avatar(c.author, "tiny"), authorLink(c.author), " ", h("span", {}, c.text));
    if (canDelete(c)) li.append(actionButton("Delete", async () => {
      await api("DELETE", `/v1/posts/${enc(post.id)}/comments/${enc(c.id)}`);
      li.remove();
    }, { class: "secondary small", "aria-label": `Delete comment: ${c.text.slice(0, 40)}` }));
    return li;
  };
  list.append(...page.items.map(item));
  const input = h("input", { name: "text", required: true, maxlength: 1000, autocomplete: "off" });
  const form = h("form", { class: "inline", "aria-label": "Add a comment", onsubmit: async (event) => {
    event.preventDefault();
    if (!requireMember()) return;
    try {
      list.append(item(await api("POST", `/v1/posts/${enc(post.id)}/comments`, { text: input.value })));
      input.value = "";
      form.querySelector(".error")?.remove();
    } catch (error) { showProblem(form, error); }
  } }, h("label", {}, "Comment", input), h("button", { type: "submit" }, "Send"));
  return h("section", { "aria-labelledby": "comments-title" },
    h("h2", { id: "comments-title" }, "Comments"), list, form);
}

/** The beat counter: BPM and 1…8 following the video's time (tempo.beats are seconds). */
function beatCounter(tempo) {
  if (!tempo?.beats?.length) return { node: null, update: () => {} };
  const counts = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => h("span", {}, String(n)));
  const node = h("div", { class: "beats" }, h("strong", {}, `${Math.round(tempo.bpm)} BPM`),
    h("span", { class: "counts", "aria-label": "Beat counter" }, counts));
  const update = (t) => {
    let i = -1;
    while (i + 1 < tempo.beats.length && tempo.beats[i + 1] <= t + 0.02) i++;
    counts.forEach((span, n) => span.classList.toggle("now", i >= 0 && i % 8 === n));
    node.dataset.beat = i >= 0 ? String((i % 8) + 1) : "";
  };
  return { node, update };
}

/** Tutorial mode: mirror, speed, loop a section and count beats. */
function tutorial(video, post) {
  let on = false;
  const time = () => video.currentTime.toFixed(2);
  const mirror = h("input", { type: "checkbox", checked: true });
  const speed = h("select", {}, [0.25, 0.5, 0.75, 1].map((v) => h("option", { value: v, selected: v === 1 }, `${v}×`)));
  const start = h("input", { type: "number", min: 0, step: 0.05, value: 0, inputmode: "decimal" });
  const end = h("input", { type: "number", min: 0, step: 0.05, value: post.media.durationSeconds?.toFixed(2) ?? "", inputmode: "decimal" });
  const loop = h("input", { type: "checkbox" });
  const playButton = h("button", { type: "button", class: "secondary", onclick: () => video.paused ? video.play() : video.pause() }, "Play / pause");
  const beats = beatCounter(post.tempo);
  const apply = () => {
    video.classList.toggle("mirrored", on && mirror.checked);
    video.controls = !(on && mirror.checked);
    video.playbackRate = video.defaultPlaybackRate = on ? Number(speed.value) : 1;
  };
  const tick = () => {
    const t = video.currentTime, a = Number(start.value), b = Number(end.value);
    if (on && loop.checked && b > a && (t >= b || t < a - 0.1)) video.currentTime = a;
    beats.update(video.currentTime);
  };
  for (const control of [mirror, speed]) control.addEventListener("change", apply);
  for (const type of ["timeupdate", "seeked"]) video.addEventListener(type, tick);
  video.addEventListener("loadedmetadata", () => { if (!end.value) end.value = video.duration.toFixed(2); });
  if (video.requestVideoFrameCallback) {
    let handle = 0;
    const frame = () => { tick(); handle = video.requestVideoFrameCallback(frame); };
    handle = video.requestVideoFrameCallback(frame);
    onLeave(() => video.cancelVideoFrameCallback(handle));
  }
  const panel = h("div", { class: "tutorial card", id: "tutorial-panel", hidden: true },
    h("div", { class: "actions" }, playButton, h("label", { class: "check" }, mirror, "Mirror"), h("label", {}, "Speed", speed)),
    h("div", { class: "loop" },
      h("label", {}, "Loop start", start), h("button", { type: "button", class: "secondary small", "aria-label": "Set loop start to now", onclick: () => { start.value = time(); } }, "Now"),
      h("label", {}, "Loop end", end), h("button", { type: "button", class: "secondary small", "aria-label": "Set loop end to now", onclick: () => { end.value = time(); } }, "Now")),
    h("label", { class: "check" }, loop, "Loop section"), beats.node);
  const toggle = h("button", { type: "button", class: "secondary toggle", "aria-pressed": "false", "aria-controls": "tutorial-panel", onclick: () => {
    on = !on;
    toggle.setAttribute("aria-pressed", String(on));
    panel.hidden = !on;
    apply();
  } }, "Tutorial mode");
  return [toggle, panel];
}

function player(post) {
  const media = post.media;
  if (media.kind === "image") return h("img", { class: "clip-media", src: media.url, alt: post.caption || "Photo" });
  const video = h("video", { class: "clip-media", src: media.url, poster: media.posterUrl, controls: true, playsinline: true,
    loop: true, preload: "metadata", "aria-label": `Clip: ${post.caption || "dance clip"}` });
  onLeave(() => video.pause());
  return video;
}

function pendingScreen(post) {
  if (post.status === "failed") {
    return [h("h1", {}, "This clip could not be processed"),
      h("p", { class: "error", role: "alert" }, post.failureReason || "The file was not a playable video."),
      h("p", {}, h("a", { href: "#/post", class: "button" }, "Post a clip"))];
  }
  const timer = setTimeout(() => go(`#/clip/${enc(post.id)}`), 2000);
  onLeave(() => clearTimeout(timer));
  return [h("h1", {}, "Processing…"), h("p", { class: "muted", role: "status" },
    "Your clip is being prepared for playback; this page updates when it is ready.")];
}

/** #/clip/<postId> — one clip with its song, likes, bookmark, comments and tutorial mode. */
export async function clipScreen(id) {
  const post = await api("GET", `/v1/posts/${enc(id)}`);
  if (post.status !== "ready") return pendingScreen(post);
  api("POST", "/v1/posts/views", { postIds: [post.id] }).catch(() => {});
  const media = player(post);
  const inCaption = new Set((post.caption.match(/#[\p{L}\p{N}_]+/gu) || []).map((t) => t.slice(1).toLowerCase()));
  const extraTags = post.tags.filter((t) => !inCaption.has(t.toLowerCase()));
  return [h("h1", {}, `Clip by ${who(post.author)}`), split([media,
    media.tagName === "VIDEO" ? h("div", { class: "actions" }, tutorial(media, post)) : null], [
    h("p", { class: "caption" }, captionNodes(post.caption)),
    extraTags.length ? h("p", { class: "tags" }, extraTags.map((t) => h("a", { href: tagHref(t), class: "pill" }, `#${t}`))) : null,
    h("p", { class: "muted" }, "by ", authorLink(post.author), post.placeName ? ` at ${post.placeName}` : "",
      ` · ${fromNow(post.createdAt)} · ${plural(post.views, "view")}`),
    post.song ? songBlock(post.song) : null,
    engagement(post), await commentsSection(post)])];
}

/** Follow/unfollow, starting from the profile's `followedByMe` and follower count. */
function followButton(profile) {
  const username = profile.username;
  const followers = h("span", { class: "muted" }, plural(profile.followers ?? 0, "follower"));
  const button = h("button", { type: "button", "aria-pressed": String(!!profile.followedByMe) },
    profile.followedByMe ? "Unfollow" : "Follow");
  button.addEventListener("click", async () => {
    if (!requireMember()) return;
    const on = button.textContent === "Follow";
    try {
      const state = await api(on ? "PUT" : "DELETE", `/v1/users/${enc(username)}/follow`);
      button.textContent = state.following ? "Unfollow" : "Follow";
      button.setAttribute("aria-pressed", String(state.following));
      followers.textContent = plural(state.followers, "follower");
      toast(state.following ? `Following ${username}` : `Unfollowed ${username}`);
    } catch (error) { toast(error.message); }
  });
  return h("p", { class: "actions" }, button, followers);
}

/** #/user/<username> — profile, counts, follow, and the user's clips. */
export async function userScreen(username) {
  const [profile, posts] = await Promise.all([api("GET", `/v1/users/${enc(username)}`),
    api("GET", `/v1/users/${enc(username)}/posts?limit=20`)]);
  const mine = session.user?.id === profile.id;
  const likes = posts.items.reduce((sum, p) => sum + p.up, 0);
  const clips = `${posts.items.length}${posts.nextCursor ? "+" : ""} clip${posts.items.length === 1 && !posts.nextCursor ? "" : "s"}`;
  return [h("div", { class: "profile-head" }, avatar(profile, "large"), h("h1", {}, shownName(profile))),
    h("p", { class: "muted" }, `@${profile.username}`, profile.homeCity ? ` · ${cityName(profile.homeCity)}` : ""),
    profile.bio ? h("p", {}, profile.bio) : null,
    h("p", { class: "counts" }, `${clips} · ${plural(likes, "like")}`),
    mine ? h("p", {}, h("a", { href: "#/post", class: "button" }, "Post a clip")) : followButton(profile),
    h("h2", {}, mine ? "My clips" : "Clips"),
    ...(await feedList(`/v1/users/${enc(username)}/posts`, "No clips yet.", posts))];
}

function personItem(user) {
  return h("li", { class: "card" }, avatar(user), " ", h("a", { href: `#/user/${enc(user.username)}` },
    h("strong", {}, shownName(user))), " ", h("span", { class: "muted" }, `@${user.username}`));
}

/** #/people — find dancers by the start of their username or display name. */
export function peopleScreen() {
  const results = h("ul", { class: "list", "aria-label": "People found" });
  const input = h("input", { name: "q", type: "search", value: params().get("q") || "", autocomplete: "off", maxlength: 100 });
  let timer = 0, asked = 0;
  const search = async () => {
    const text = input.value.trim(), mine = ++asked;
    history.replaceState(null, "", text ? `#/people?q=${enc(text)}` : "#/people");
    if (!text) return results.replaceChildren();
    try {
      const page = await api("GET", `/v1/users?q=${enc(text)}&limit=20`);
      if (mine !== asked) return;
      results.replaceChildren(...(page.items.length ? page.items.map(personItem) : [h("li", { class: "muted" }, "No one found.")]));
    } catch (error) { toast(error.message); }
  };
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(search, 250); });
  onLeave(() => clearTimeout(timer));
  if (input.value) search();
  return [h("h1", {}, "Find people"),
    h("form", { role: "search", "aria-label": "People search", onsubmit: (event) => { event.preventDefault(); clearTimeout(timer); search(); } },
      h("label", {}, "Search people", input), h("button", { type: "submit" }, "Search")),
    results];
}

/** #/bookmarks — the clips I saved. */
export async function bookmarksScreen() {
  if (!session.isMember) return [h("h1", {}, "Bookmarks"), h("p", {}, h("a", { href: "#/start" }, "Sign up"), " to save clips for later.")];
  return [h("h1", {}, "Bookmarks"), ...(await feedList("/v1/me/bookmarks", "No bookmarks yet — tap Bookmark on a clip to save it."))];
}

export const routes = { clips: clipsScreen, clip: clipScreen, user: userScreen, people: peopleScreen, bookmarks: bookmarksScreen };
