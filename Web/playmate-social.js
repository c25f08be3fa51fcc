// Playmate's social screens: friends (#/friends: requests both ways, add by username, remove) and
// invitations to sessions (#/invitations: accept or decline those received; those sent).
import { api, session } from "./api.js";
import { h, toast, actionButton, avatar } from "./ui.js";
import { go } from "./router.js";
import { enc, timeName, label, INVITATION_STATUSES } from "./format.js";
import { personName, memberOnly, fieldErrors } from "./playmate-common.js";

const again = () => go(location.hash);

function person(user) {
  return h("span", { class: "pm-who" }, avatar(user, "tiny"), " ", h("a", { href: `#/stats/${enc(user.username)}` }, personName(user)));
}

/** A list with a heading, or a muted line when empty. */
function section(title, items, row, empty) {
  return h("section", { "aria-label": title }, h("h2", {}, title),
    items.length ? h("ul", { class: "list" }, items.map(row)) : h("p", { class: "muted" }, empty));
}

/** "Add a friend": find people by username, then send a request. */
function addFriend(known) {
  const results = h("ul", { class: "list", "aria-label": "People found" });
  const form = h("form", { "aria-label": "Add a friend", class: "pm-row pm-search", onsubmit: async (e) => {
    e.preventDefault();
    const q = form.elements.q.value.trim();
    if (!q) return;
    try {
      const found = await api("GET", `/v1/users?q=${enc(q)}&limit=10`);
      const people = found.items.filter((user) => user.id !== session.user.id);
      results.replaceChildren(...(people.length ? people.map((user) => h("li", { class: "card pm-person" }, person(user),
        known.has(user.id) ? h("span", { class: "muted" }, known.get(user.id))
          : actionButton("Add friend", async () => {
            const answer = await api("POST", "/v1/me/friend-requests", { userId: user.id });
            toast(answer.status === "friends" ? `You and @${user.username} are friends` : `Request sent to @${user.username}`);
            again();
          }, { "aria-label": `Add friend @${user.username}` }))) : [h("li", { class: "muted" }, "Nobody by that name.")]));
    } catch (error) { fieldErrors(form, error); }
  } },
  h("label", {}, "Username", h("input", { name: "q", type: "search", autocomplete: "off", maxlength: 100 })),
  h("button", { type: "submit" }, "Find"));
  return [h("h2", {}, "Add a friend"), form, results];
}

/** #/friends — friends, requests to and from you, and adding someone by username. */
export async function friendsScreen() {
  const gate = memberOnly("Friends", "Sign up to add friends and play together.");
  if (gate) return gate;
  const [friends, incoming, outgoing] = await Promise.all([api("GET", "/v1/me/friends?limit=100"),
    api("GET", "/v1/me/friend-requests?direction=incoming&limit=100"), api("GET", "/v1/me/friend-requests?direction=outgoing&limit=100")]);
  const known = new Map([...friends.items.map((f) => [f.user.id, "Friend"]), ...incoming.items.map((r) => [r.user.id, "Asked you"]),
    ...outgoing.items.map((r) => [r.user.id, "Request sent"])]);
  const name = (user) => `@${user.username}`;
  return [h("h1", {}, "Friends"),
    section("Requests to you", incoming.items, (r) => h("li", { class: "card pm-person" }, person(r.user), h("span", { class: "pm-actions" },
      actionButton("Accept", async () => { await api("POST", `/v1/me/friend-requests/${enc(r.user.id)}/accept`); toast(`You and ${name(r.user)} are friends`); again(); },
        { "aria-label": `Accept ${name(r.user)}` }), " ",
      actionButton("Decline", async () => { await api("POST", `/v1/me/friend-requests/${enc(r.user.id)}/deny`); again(); },
        { class: "secondary", "aria-label": `Decline ${name(r.user)}` }))), "No requests."),
    section("Your requests", outgoing.items, (r) => h("li", { class: "card pm-person" }, person(r.user),
      actionButton("Cancel", async () => { await api("DELETE", `/v1/me/friend-requests/${enc(r.user.id)}`); again(); },
        { class: "secondary", "aria-label": `Cancel request to ${name(r.user)}` })), "None pending."),
    section(`Your friends (${friends.items.length})`, friends.items, (f) => h("li", { class: "card pm-person" }, person(f.user),
      actionButton("Remove", async () => { await api("DELETE", `/v1/me/friends/${enc(f.user.id)}`); again(); },
        { class: "secondary", "aria-label": `Remove ${name(f.user)}` })), "No friends yet — add someone below."),
    addFriend(known)];
}


function invitationRow(invitation, incoming, alert) {
  const answer = (what) => actionButton(what === "accept" ? "Accept" : "Decline", async () => {
    try {
      await api("POST", `/v1/me/invitations/${enc(invitation.id)}/${what}`);
      toast(what === "accept" ? `You're in: ${invitation.eventName}` : "Declined");
      again();
    } catch (error) { alert.textContent = error.message; }
  }, { class: what === "accept" ? null : "secondary", "aria-label": `${what === "accept" ? "Accept" : "Decline"} ${invitation.eventName}` });
  const who = incoming ? invitation.from : invitation.to;
  return h("li", { class: "card pm-invitation" },
    h("a", { href: `#/session/${enc(invitation.eventId)}` }, h("strong", {}, invitation.eventName)),
    h("div", { class: "muted" }, `${timeName(invitation.eventStart)} · ${incoming ? "from" : "to"} `, person(who)),
    incoming && invitation.status === "pending" ? h("p", { class: "pm-actions" }, answer("accept"), " ", answer("decline"))
      : h("div", {}, h("span", { class: "pm-tag" }, label(INVITATION_STATUSES, invitation.status))));
}

/** #/invitations — invitations received (accept / decline) and sent. */
export async function invitationsScreen() {
  const gate = memberOnly("Invitations", "Sign up so friends can invite you to play.");
  if (gate) return gate;
  const [received, sent] = await Promise.all([api("GET", "/v1/me/invitations?limit=50"), api("GET", "/v1/me/invitations?direction=outgoing&limit=50")]);
  const alert = h("p", { class: "pm-alert", role: "alert" });
  return [h("h1", {}, "Invitations"), alert,
    section("Received", received.items, (i) => invitationRow(i, true, alert), "No invitations yet."),
    section("Sent", sent.items, (i) => invitationRow(i, false, alert), "You have not invited anyone yet."),
    h("p", {}, h("a", { href: "#/sessions" }, "← Sessions"))];
}
