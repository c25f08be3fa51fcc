// Pala: meet people going to the same events. My events (each with its wall), the wall (several
// people at once with big photos: like or pass by button, arrow key or swipe; a like back is a
// match), matches (chat, unmatch) and the chat (history, older pages, live messages, typing, read
// receipts, unread badges, block).
import { api, ApiError, session, pagePath, requestKey } from "./api.js";
import { h, toast, showProblem, requireMember, actionButton, split, wide, avatar, errorText } from "./ui.js";
import { go, onLeave } from "./router.js";
import { subscribe, send, isOpen } from "./live.js";
import { enc, shownName, eventWhen, timeName, label, cityName, GENDERS, AGE_GROUPS, TICKETED_QUERY } from "./format.js";

const nameOf = (user) => shownName(user, "Someone");

/** The screen's heading plus a sign-up prompt for anonymous users (null when signed up). */
function membersOnly(title) {
  if (session.isMember) return null;
  return [h("h1", {}, title), h("p", {}, "Meeting people needs an account. ",
    h("a", { href: "#/start" }, "Sign up"), " — it takes ten seconds.")];
}

/** A button that asks "Sure?" inline before running `action` (no blocking dialogs). */
function confirmButton(label, question, action, attributes = {}) {
  const box = h("span", { class: "pala-confirm" });
  const ask = () => box.replaceChildren(h("span", { role: "alert" }, question, " "),
    actionButton(`Yes, ${label.toLowerCase()}`, action), " ",
    h("button", { type: "button", class: "secondary", onclick: reset }, "Cancel"));
  const reset = () => box.replaceChildren(h("button", { type: "button", class: "secondary", ...attributes, onclick: ask }, label));
  reset();
  return box;
}

// ---------------------------------------------------------------- #/pala

function profileForm(me) {
  const wanted = new Set(me.preferences?.genderPreference || []);
  const form = h("form", { "aria-label": "Your profile for meeting people", onsubmit: async (event) => {
    event.preventDefault();
    if (!requireMember()) return;
    const data = new FormData(form);
    const body = { preferences: { genderPreference: data.getAll("meet") } };
    if (data.get("gender")) body.gender = data.get("gender");
    if (data.get("birthDate")) body.birthDate = data.get("birthDate");
    try { await api("PATCH", "/v1/me", body); toast("Profile saved"); go("#/pala"); } catch (error) { showProblem(form, error); }
  } },
    h("label", {}, "Gender", h("select", { name: "gender", required: true },
      h("option", { value: "" }, "Choose…"),
      ...GENDERS.map(([value, label]) => h("option", { value, selected: me.gender === value }, label)))),
    h("label", {}, "Birth date", h("input", { name: "birthDate", type: "date", required: true, value: me.birthDate || "" })),
    h("fieldset", {}, h("legend", {}, "I want to meet (none ticked: everyone)"),
      ...GENDERS.map(([value, , label]) => h("label", { class: "pala-check" },
        h("input", { type: "checkbox", name: "meet", value, checked: wanted.has(value) }), label))),
    h("button", { type: "submit" }, "Save profile"));
  const complete = me.gender && me.birthDate;
  return h("details", { class: "card", open: !complete },
    h("summary", {}, "Your profile for meeting people"),
    complete ? null : h("p", { class: "muted" }, "Walls match people by gender, preference and age (18+)."), form);
}

function eventItem(event) {
  return h("li", { class: "card" },
    h("a", { href: `#/wall/${enc(event.id)}` }, h("strong", {}, event.name)),
    h("div", { class: "muted" }, `${eventWhen(event)} · ${event.place.name}`));
}

function conversationItem(c) {
  const unread = c.unreadCount > 0;
  return h("li", { class: "card pala-row" }, avatar(c.user),
    h("div", {}, h("a", { href: `#/chat/${enc(c.id)}` }, h("strong", {}, nameOf(c.user))),
      h("span", { class: "badge", "aria-label": unread ? `${c.unreadCount} unread` : false }, unread ? String(c.unreadCount) : ""),
      c.user && c.presence?.online ? h("span", { class: "muted" }, " · online") : null,
      c.lastMessage ? h("div", { class: "muted pala-preview" }, c.lastMessage.text) : null));
}

async function conversationList() {
  const page = await api("GET", "/v1/conversations?limit=50");
  return page.items.length ? h("ul", { class: "list", "aria-label": "Chats" }, page.items.map(conversationItem))
    : h("p", { class: "muted" }, "No chats yet: match with someone first.");
}

/** My events (each a wall), a link to matches, chats with unread badges, and my wall profile. */
export async function palaScreen() {
  const guest = membersOnly("Meet people");
  if (guest) return guest;
  const [me, events, chats] = await Promise.all([
    api("GET", "/v1/me"), api("GET", `/v1/me/events?status=going&limit=50&${TICKETED_QUERY}`), conversationList()]);
  const holder = h("div", {}, chats);
  const refresh = async () => { try { holder.replaceChildren(await conversationList()); } catch { /* keep the old list */ } };
  const stops = [subscribe("message", refresh), subscribe("notification", (d) => d.notification?.kind === "match" && refresh())];
  onLeave(() => stops.forEach((stop) => stop()));
  return [h("h1", {}, "Meet people"),
    h("p", { class: "muted" }, "Like people going to the same events as you; a like back is a match."),
    profileForm(me),
    split([h("h2", {}, "Your events"),
      events.items.length ? h("ul", { class: "list" }, events.items.map(eventItem))
        : h("p", { class: "muted" }, "Say you're going to an event to see who else is. ", h("a", { href: "#/events" }, "Find events")),
      h("p", {}, h("a", { href: "#/matches", class: "button" }, "Your matches"))], [h("h2", {}, "Chats"), holder])];
}

// ---------------------------------------------------------------- #/wall/<eventId>

function matchBanner(match) {
  return h("div", { class: "card pala-match", role: "status" },
    h("h2", {}, "It's a match!"),
    h("p", {}, `You and ${nameOf(match.user)} like each other${match.eventName ? ` — see you at ${match.eventName}` : ""}.`),
    match.conversationId ? h("a", { class: "button", href: `#/chat/${enc(match.conversationId)}` }, `Chat with ${nameOf(match.user)}`)
      : h("a", { class: "button", href: "#/matches" }, "See your matches"));
}

const reducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

/** Lets a card be dragged sideways: past a third of its width (at least 60 px) right likes and left
 * passes, less springs back; it follows the pointer with a tilt and a "Like" / "Pass" stamp. A
 * vertical move stays a scroll (`touch-action: pan-y`). */
function swipeable(article, decide) {
  const stamp = article.querySelector(".pala-stamp");
  let start = null;
  let dx = 0;
  const threshold = () => Math.max(60, article.offsetWidth / 3);
  const reset = () => {
    start = null;
    article.classList.remove("dragging");
    if (article.dataset.busy) return; // deciding: the card leaves from where it was let go
    article.style.transform = "";
    stamp.textContent = "";
  };
  article.addEventListener("pointerdown", (event) => {
    if (!event.isPrimary || event.button !== 0 || event.target.closest("button, a") || article.dataset.busy) return;
    start = { x: event.clientX, y: event.clientY, id: event.pointerId };
    dx = 0;
  });
  article.addEventListener("pointermove", (event) => {
    if (!start || event.pointerId !== start.id) return;
    dx = event.clientX - start.x;
    if (!article.classList.contains("dragging")) {
      if (Math.abs(dx) < 8) return; // a tap so far
      if (Math.abs(event.clientY - start.y) > Math.abs(dx)) { start = null; return; } // a scroll
      article.setPointerCapture(event.pointerId);
      article.classList.add("dragging");
    }
    article.style.transform = `translateX(${dx}px) rotate(${dx / 16}deg)`;
    stamp.textContent = dx > 0 ? "Like" : "Pass";
    stamp.dataset.decision = dx > 0 ? "like" : "pass";
    stamp.style.opacity = Math.min(1, Math.abs(dx) / threshold());
  });
  article.addEventListener("pointerup", (event) => {
    if (!start || event.pointerId !== start.id) return;
    const dragged = article.classList.contains("dragging") && Math.abs(dx) >= threshold();
    if (dragged) decide(dx > 0 ? "like" : "pass");
    reset();
  });
  article.addEventListener("pointercancel", reset);
  article.addEventListener("dragstart", (event) => event.preventDefault());
}

/** One person on the wall: a big square photo (or their initial), name, age group and gender, and
 * Pass / Like — also the left and right arrow keys on those buttons, or a swipe of the card.
 * `decide(decision)` is called once per gesture; the wall makes the card leave. */
function personCard(card, decide) {
  const user = card.user;
  const name = nameOf(user);
  const article = h("article", { class: "card pala-person", "aria-label": name,
    onkeydown: (event) => {
      const decision = { ArrowRight: "like", ArrowLeft: "pass" }[event.key];
      if (!decision || !event.target.closest("button")) return;
      event.preventDefault();
      decide(decision);
    } },
  h("div", { class: "pala-picture" }, avatar(user, "large"), h("span", { class: "pala-stamp", "aria-hidden": "true" })),
  h("h2", {}, name),
  h("p", { class: "muted" }, [user.ageGroup ? `Age ${label(AGE_GROUPS, user.ageGroup)}` : null,
    card.gender ? label(GENDERS, card.gender) : null].filter(Boolean).join(" · ") || "\u00a0"),
  user.bio ? h("p", { class: "pala-bio" }, user.bio) : null,
  h("div", { class: "pala-actions" },
    h("button", { type: "button", class: "secondary", "aria-label": `Pass on ${name}`, "aria-keyshortcuts": "ArrowLeft",
      onclick: () => decide("pass") }, "Pass"),
    h("button", { type: "button", "aria-label": `Like ${name}`, "aria-keyshortcuts": "ArrowRight",
      onclick: () => decide("like") }, "Like")));
  swipeable(article, decide);
  return article;
}

/** Sends a decided card off to its side (at once with reduced motion). */
async function leave(article, decision) {
  if (reducedMotion() || !article.animate) return;
  const side = decision === "like" ? 1 : -1;
  await article.animate([{ transform: article.style.transform || "none", opacity: 1 },
    { transform: `translateX(${side * 120}%) rotate(${side * 20}deg)`, opacity: 0 }],
  { duration: 220, easing: "ease-in", fill: "forwards" }).finished.catch(() => {});
}

function wallProblem(error, eventId) {
  if (!(error instanceof ApiError) || error.status !== 403) throw error;
  const fix = error.code === "not_going" ? h("a", { href: `#/event/${enc(eventId)}` }, "Open the event and say you're going")
    : h("a", { href: "#/pala" }, "Check your profile");
  return [h("p", { class: "error", role: "alert" }, error.message), h("p", {}, fix)];
}

/** Why the wall is empty, and what the viewer can do about it when their own profile is why:
 * people who chose whom they meet only see, and are only seen by, members who say their gender;
 * and whom the viewer chose to meet leaves the others out. */
function emptyWall(event, me) {
  const others = Math.max(0, (event.counts?.going ?? 0) - (event.myStatus === "going" ? 1 : 0));
  if (others > 0 && !me.gender) {
    return h("p", { class: "pala-empty", role: "status" },
      `${others === 1 ? "1 other person is" : `${others} other people are`} going, but people here choose whom they meet. `,
      h("a", { href: "#/settings" }, "Add your gender and birth date"), " to see them and be seen.");
  }
  const wanted = me.preferences?.genderPreference || [];
  if (others > 0 && wanted.length) {
    const whom = wanted.map((gender) => label(GENDERS, gender, 2).toLowerCase()).join(" and ");
    return h("p", { class: "pala-empty", role: "status" },
      `No one else to see right now — you've seen everyone going who wants to meet you. You meet ${whom} only: `,
      h("a", { href: "#/settings" }, "change whom you meet"), " to see more people.");
  }
  return h("p", { class: "muted", role: "status" }, others > 0
    ? "No one else to see right now — you've seen everyone going who wants to meet you. Check back as more people join."
    : "No one else to see right now — check back later as more people say they're going.");
}

/** The people going to an event, several at once (more on wide screens), to like or pass; a decided
 * card leaves and the next person takes its place. */
export async function wallScreen(eventId) {
  const guest = membersOnly("Who's going");
  if (guest) return guest;
  const [event, me] = await Promise.all([api("GET", `/v1/events/${enc(eventId)}`), api("GET", "/v1/me")]);
  const heading = h("h1", {}, `Who's going to ${event.name}`);
  const grid = h("ul", { class: "list pala-wall", "aria-label": "People going" });
  const stage = h("div", {}, grid);
  const banner = h("div", {});
  const said = h("p", { class: "visually-hidden", role: "status" });
  const queue = [];
  const seen = new Set();
  let cursor = null;
  let loading = null;
  const load = () => loading ??= api("GET", pagePath(`/v1/events/${enc(eventId)}/wall`, { limit: 20, cursor }))
    .then((page) => {
      queue.push(...page.items.filter((card) => !seen.has(card.user.id)));
      page.items.forEach((card) => seen.add(card.user.id));
      cursor = page.nextCursor || null;
    }).finally(() => { loading = null; });
  const next = async () => {
    if (!queue.length && cursor) await load();
    return queue.shift() || null;
  };
  const item = (card) => {
    const li = h("li", {});
    const decide = async (decision) => {
      const article = li.firstChild;
      if (article.dataset.busy) return;
      article.dataset.busy = "true";
      let result;
      try {
        result = await api("PUT", `/v1/events/${enc(eventId)}/wall/${enc(card.user.id)}`, { decision });
      } catch (error) {
        delete article.dataset.busy;
        article.style.transform = "";
        article.querySelector(".pala-stamp").textContent = "";
        toast(errorText(error));
        return;
      }
      if (result.match) {
        matched.add(result.match.user.id);
        banner.replaceChildren(matchBanner(result.match));
      }
      said.textContent = decision === "like" ? `You liked ${nameOf(card.user)}.` : `You passed on ${nameOf(card.user)}.`;
      const hadFocus = li.contains(document.activeElement);
      await leave(article, decision);
      const following = await next().catch(() => null);
      const fresh = following ? item(following) : null;
      fresh ? li.replaceWith(fresh) : li.remove();
      if (fresh && !reducedMotion()) fresh.animate?.([{ opacity: 0, transform: "scale(.94)" }, { opacity: 1, transform: "none" }], 200);
      if (!grid.children.length) stage.replaceChildren(emptyWall(event, me));
      else if (hadFocus) (fresh || grid.firstChild).querySelector("button:last-child").focus();
    };
    li.append(personCard(card, decide));
    return li;
  };
  // Someone I liked earlier liked me back while I'm here (my own like's match is told to me too:
  // its answer, with the chat, came first — keep that one).
  const matched = new Set();
  const stop = subscribe("notification", (data) => {
    const n = data.notification;
    if (n?.kind !== "match" || n.eventId !== eventId || matched.has(n.actor?.id)) return;
    matched.add(n.actor?.id);
    banner.replaceChildren(matchBanner({ user: n.actor, eventName: event.name }));
  });
  onLeave(stop);
  try { await load(); } catch (error) { return [heading, ...wallProblem(error, eventId)]; }
  for (let slots = wide() ? 12 : 6; slots > 0; slots--) {
    const card = await next();
    if (!card) break;
    grid.append(item(card));
  }
  if (!grid.children.length) stage.replaceChildren(emptyWall(event, me));
  return [heading, h("p", { class: "links" }, h("a", { href: "#/pala" }, "Your events"), " · ", h("a", { href: "#/matches" }, "Your matches")),
    h("p", { class: "muted" }, "Like someone who stands out: tap Like or Pass, or swipe a card right or left."),
    banner, said, stage];
}

// ---------------------------------------------------------------- #/matches

function matchItem(match) {
  return h("li", { class: "card pala-row" }, avatar(match.user),
    h("div", {}, h("strong", {}, nameOf(match.user)),
      match.eventName ? h("div", { class: "muted" }, `Matched at ${match.eventName}`) : null,
      h("div", { class: "pala-actions" },
        match.conversationId ? h("a", { class: "button", href: `#/chat/${enc(match.conversationId)}` }, `Chat with ${nameOf(match.user)}`) : null,
        confirmButton("Unmatch", `End the match and chat with ${nameOf(match.user)}?`, async () => {
          await api("DELETE", `/v1/me/matches/${enc(match.id)}`);
          toast("Unmatched");
          go("#/matches");
        }, { "aria-label": `Unmatch ${nameOf(match.user)}` }))));
}

/** The caller's matches, newest first: chat or unmatch. */
export async function matchesScreen() {
  const guest = membersOnly("Your matches");
  if (guest) return guest;
  const page = await api("GET", "/v1/me/matches?limit=50");
  return [h("h1", {}, "Your matches"),
    page.items.length ? h("ul", { class: "list" }, page.items.map(matchItem))
      : h("p", { class: "muted" }, "No matches yet. ", h("a", { href: "#/pala" }, "Open an event's wall"), " and like someone.")];
}

// ---------------------------------------------------------------- #/chat/<conversationId>

/** A message's time: "20:30" today, "Yesterday · 23:10" before. */
const clock = (iso) => timeName(iso).replace(/^Today · /, "");

/** Sends with a client id, retrying network failures with the same id (never sent twice). */
async function sendMessage(id, text) {
  const body = { text, clientId: requestKey() };
  for (let attempt = 0; ; attempt++) {
    try { return await api("POST", `/v1/conversations/${enc(id)}/messages`, body); } catch (error) {
      if (error.status || attempt >= 2) throw error; // only a network failure (status 0) is tried again
    }
  }
}

/** One conversation: history (older on demand), live messages, typing, read receipts. */
export async function chatScreen(id) {
  const guest = membersOnly("Chat");
  if (guest) return guest;
  const base = `/v1/conversations/${enc(id)}`;
  // Wide screens list the chats beside this one.
  const [conversation, first, chats] = await Promise.all([api("GET", base), api("GET", `${base}/messages?limit=30`),
    wide() ? conversationList().catch(() => null) : null]);
  chats?.querySelector(`a[href="#/chat/${enc(id)}"]`)?.setAttribute("aria-current", "page");
  const me = session.user.id;
  const other = nameOf(conversation.user);
  const messages = new Map(first.items.map((m) => [m.seq, m]));
  let hasOlder = first.hasMore;
  let otherRead = conversation.otherReadSeq;
  let myRead = conversation.readSeq;

  // The list keeps its list role (axe: items belong in a list); a box around it is the live log.
  const log = h("ol", { class: "pala-log" });
  const older = actionButton("Older", loadOlder, { class: "secondary" });
  const typing = h("p", { class: "muted pala-typing", "aria-live": "polite" });
  const lastSeq = () => Math.max(0, ...messages.keys());

  function draw() {
    const sorted = [...messages.values()].sort((a, b) => a.seq - b.seq);
    const seenSeq = Math.max(0, ...sorted.filter((m) => m.senderId === me && m.seq <= otherRead).map((m) => m.seq));
    // Their photo beside the last message of each run of theirs, as messengers do.
    const lastOfRun = (m, i) => m.senderId !== me && sorted[i + 1]?.senderId !== m.senderId;
    log.replaceChildren(...sorted.map((m, i) => h("li", { class: m.senderId === me ? "mine" : "theirs" },
      lastOfRun(m, i) ? avatar(conversation.user, "tiny") : null,
      h("span", { class: "pala-text" }, m.text), h("time", { datetime: m.createdAt }, clock(m.createdAt)),
      m.seq === seenSeq ? h("span", { class: "pala-seen" }, "Seen") : null)));
    older.hidden = !hasOlder;
  }
  function add(list) {
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 60;
    for (const m of list) messages.set(m.seq, m);
    draw();
    if (atBottom) log.scrollTop = log.scrollHeight;
    markRead();
  }
  async function markRead() {
    const seq = lastSeq();
    if (seq <= myRead || document.visibilityState !== "visible") return;
    myRead = seq;
    try { await api("POST", `${base}/read`, { seq }); } catch { myRead = 0; }
  }
  async function loadOlder() {
    const before = Math.min(...messages.keys());
    const page = await api("GET", `${base}/messages?limit=30&before=${before}`);
    const height = log.scrollHeight;
    for (const m of page.items) messages.set(m.seq, m);
    hasOlder = page.hasMore;
    draw();
    log.scrollTop = log.scrollHeight - height;
  }
  async function sync() {
    const page = await api("GET", `${base}/messages?since=${lastSeq()}&limit=100`);
    if (page.items.length) add(page.items);
  }

  let typingTimer = null;
  const section = h("section", { class: "pala-chat", "data-live": isOpen() ? "open" : "connecting" });
  const stops = [
    subscribe("message", ({ message }) => {
      if (message?.conversationId !== id) return;
      if (message.senderId !== me) { typing.textContent = ""; clearTimeout(typingTimer); }
      add([message]);
    }),
    subscribe("read", (data) => {
      if (data.conversationId !== id || data.userId === me || data.seq <= otherRead) return;
      otherRead = data.seq;
      draw();
    }),
    subscribe("typing", (data) => {
      if (data.conversationId !== id || data.userId === me) return;
      typing.textContent = `${other} is typing…`;
      clearTimeout(typingTimer);
      typingTimer = setTimeout(() => { typing.textContent = ""; }, 5000);
    }),
    // (Re)connected: catch up on anything sent while the socket was closed.
    subscribe("ready", () => { section.dataset.live = "open"; sync().catch(() => {}); }),
  ];
  const onVisible = () => { if (document.visibilityState === "visible") markRead(); };
  document.addEventListener("visibilitychange", onVisible);
  log.addEventListener("scroll", () => { if (log.scrollTop === 0 && hasOlder && messages.size) loadOlder().catch(() => {}); });
  onLeave(() => { stops.forEach((stop) => stop()); clearTimeout(typingTimer); document.removeEventListener("visibilitychange", onVisible); });

  let lastTyping = 0;
  const input = h("input", { name: "text", autocomplete: "off", maxlength: 2000, required: true, oninput: () => {
    if (Date.now() - lastTyping < 3000 || !isOpen()) return;
    lastTyping = Date.now();
    send({ type: "typing", conversationId: id });
  } });
  const composer = h("form", { class: "pala-composer", "aria-label": "Send a message", onsubmit: async (event) => {
    event.preventDefault();
    if (!requireMember()) return;
    const text = input.value.trim();
    if (!text) return;
    try {
      const sent = await sendMessage(id, text);
      input.value = "";
      lastTyping = 0;
      composer.querySelector(".error")?.remove();
      add([sent]);
    } catch (error) { showProblem(composer, error); }
  } }, h("label", {}, "Message", input), h("button", { type: "submit" }, "Send"));

  draw();
  requestAnimationFrame(() => { log.scrollTop = log.scrollHeight; });
  markRead();
  section.append(older, h("div", { role: "log", "aria-label": `Conversation with ${other}`, "aria-live": "polite" }, log),
    typing, composer);
  return [h("h1", { class: "pala-chat-title" }, avatar(conversation.user), h("span", {}, other)),
    h("p", { class: "muted pala-head" }, conversation.presence?.online ? "Online" : "Offline", " · ",
      h("a", { href: "#/pala" }, "All chats"), " · ",
      confirmButton("Block", `Block ${other}? Neither of you will see the other again.`, async () => {
        await api("PUT", `/v1/me/blocks/${enc(conversation.user.id)}`);
        toast(`Blocked ${other}`);
        go("#/pala");
      }, { "aria-label": `Block ${other}` })),
    chats ? split(section, [h("h2", {}, "Chats"), chats], true) : section];
}

export const routes = { pala: palaScreen, wall: wallScreen, matches: matchesScreen, chat: chatScreen };
