// The staff screens, loaded on demand from account.js: the moderators' flag queue (#/moderation:
// restore, remove, ban) and the admins' promotions and ads (#/admin). Admin screens may speak of
// servers and settings; the rest of the app does not.
import { api } from "./api.js";
import { h, toast, field, position, actionButton } from "./ui.js";
import { cityAt, findCity } from "./city.js";
import { enc, shownName, fromNow } from "./format.js";
import { pager, optional, select, settingsForm, saved, cityPicker } from "./account.js";

/** The city the admin is in (position, else home city), for the hub and ads forms. */
async function currentCity(me) {
  const here = await position();
  if (here) {
    const city = await cityAt(here);
    if (city) return city;
  }
  if (!me.homeCity) return null;
  return (await findCity(me.homeCity.split("$")[0]).catch(() => null)) || null;
}

const staffOnly = (title, text) => [h("h1", {}, title), h("p", { class: "muted" }, text)];

// Moderation

function flaggedItem(post) {
  const author = shownName(post.author, post.author ? "name hidden" : post.source?.name || "imported");
  const media = post.media.kind === "video"
    ? h("video", { src: post.media.url, poster: post.media.posterUrl, controls: true, preload: "none", playsinline: true,
      "aria-label": `Flagged clip by ${author}` })
    : h("img", { src: post.media.url, alt: post.caption || `Flagged photo by ${author}` });
  const item = h("li", { class: "card flagged" });
  const done = (text) => { item.remove(); toast(text); };
  let banned = false;
  const ban = post.author ? actionButton("Ban author", async (event) => {
    if (!banned && !confirm(`Ban ${author}? Their logins end and their posts disappear until the ban is lifted.`)) return;
    await api(banned ? "DELETE" : "PUT", `/v1/moderation/users/${enc(post.author.id)}/ban`);
    banned = !banned;
    event.target.textContent = banned ? "Lift ban" : "Ban author";
    toast(banned ? `${author} is banned` : `Ban on ${author} lifted`);
  }, { class: "secondary danger" }) : null;
  item.append(media,
    h("p", {}, post.caption || h("span", { class: "muted" }, "No caption")),
    h("p", { class: "muted small" }, `By ${author}`, post.placeName ? ` at ${post.placeName}` : "",
      ` · ${fromNow(post.createdAt)} · ▲ ${post.up} ▼ ${post.down}`),
    h("div", { class: "actions" },
      actionButton("Restore", async () => { await api("POST", `/v1/moderation/posts/${enc(post.id)}/restore`); done("Restored"); }),
      actionButton("Remove", async () => {
        if (!confirm("Remove this post and its media?")) return;
        await api("POST", `/v1/moderation/posts/${enc(post.id)}/remove`);
        done("Removed");
      }, { class: "secondary" }),
      ban));
  return item;
}

async function moderationScreen() {
  const me = await api("GET", "/v1/me");
  if (me.role === "user") return staffOnly("Moderation", "Only moderators review flagged clips.");
  const empty = h("p", { class: "muted" }, "Nothing waiting for review.");
  const { list, more, load } = pager("/v1/moderation/posts?limit=20", flaggedItem);
  list.setAttribute("aria-label", "Flagged posts");
  await load();
  new MutationObserver(() => { empty.hidden = list.children.length > 0; }).observe(list, { childList: true });
  empty.hidden = list.children.length > 0;
  return [h("h1", {}, "Moderation"),
    h("p", { class: "muted" }, "Posts hidden after enough people flagged them. Restore clears the flags; Remove deletes the post."),
    empty, list, more];
}

// Administration: promotions and ads

const isoOrNothing = (value) => value ? new Date(value).toISOString() : undefined;

function venuePicker(cityKey) {
  const venue = h("select", { name: "placeId", required: true, "aria-label": "Venue" });
  let timer;
  const search = h("input", { type: "search", name: "venueSearch", autocomplete: "off", placeholder: "Venue name" });
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const q = search.value.trim();
      if (!q) return;
      const found = await api("GET", `/v1/places?q=${enc(q)}${cityKey() ? `&city=${enc(cityKey())}` : ""}&limit=20`).catch(() => ({ items: [] }));
      venue.replaceChildren(...(found.items.length ? found.items.map((p) => h("option", { value: p.id }, `${p.name}${p.address?.street ? `, ${p.address.street}` : ""}`))
        : [h("option", { value: "" }, "No venue found")]));
    }, 250);
  });
  const set = (place) => venue.replaceChildren(h("option", { value: place.id }, place.name));
  const clear = () => venue.replaceChildren(h("option", { value: "" }, "Search for a venue first"));
  clear();
  return { nodes: [h("label", {}, "Find venue", search), h("label", {}, "Venue", venue)], set, clear };
}

function promotionsSection(city) {
  const list = h("ul", { class: "list", "aria-label": "Promotions" });
  const cityForm = h("form", { "aria-label": "Hub city", class: "inline", onsubmit: (event) => { event.preventDefault(); reload(); } },
    cityPicker("City", "hubCity", city?.key), h("button", { type: "submit", class: "secondary" }, "Show"));
  const cityKey = () => cityForm.elements.hubCity.value;
  const venues = venuePicker(cityKey);
  const form = settingsForm("Promotion", async (data) => {
    const body = { tier: Number(data.get("tier")), tagline: data.get("tagline").trim() || undefined,
      startsAt: isoOrNothing(data.get("startsAt")), endsAt: isoOrNothing(data.get("endsAt")) };
    await api("PUT", `/v1/places/${enc(data.get("placeId"))}/promotion`, body);
    saved(form, "Promotion saved");
    form.reset();
    venues.clear();
    await reload();
  },
  h("h3", {}, "Promote a venue"), ...venues.nodes,
  field("Tier (higher comes first; above 0 is highlighted)", "tier", "number", { min: 0, max: 100, value: 1 }),
  optional("Tagline", "tagline", "", { maxlength: 140, placeholder: "Two-for-one until 11" }),
  optional("Starts", "startsAt", "", { type: "datetime-local" }),
  optional("Ends", "endsAt", "", { type: "datetime-local" }),
  h("button", { type: "submit" }, "Save promotion"));

  function edit(entry) {
    venues.set(entry.place);
    form.elements.tier.value = entry.tier;
    form.elements.tagline.value = entry.tagline || "";
    form.elements.tier.focus();
  }
  function item(entry) {
    const name = entry.place.name;
    return h("li", { class: `card row${entry.highlighted ? " promoted" : ""}` },
      h("div", {}, h("strong", {}, name), h("div", { class: "muted small" }, `Tier ${entry.tier}`, entry.tagline ? ` · ${entry.tagline}` : "")),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "secondary", "aria-label": `Edit promotion of ${name}`, onclick: () => edit(entry) }, "Edit"),
        actionButton("End", async () => { await api("DELETE", `/v1/places/${enc(entry.place.id)}/promotion`); toast(`${name} is no longer promoted`); await reload(); },
          { class: "secondary", "aria-label": `End promotion of ${name}` })));
  }
  async function reload() {
    if (!cityKey()) return list.replaceChildren(h("li", { class: "muted" }, "Choose a city to see its promoted venues."));
    const hub = await api("GET", `/v1/cities/${enc(cityKey())}/hub?limit=100`);
    const promoted = hub.items.filter((entry) => entry.tier > 0 || entry.tagline);
    list.replaceChildren(...(promoted.length ? promoted.map(item) : [h("li", { class: "muted" }, "No venue is promoted in this city right now.")]));
  }
  return { node: h("section", { "aria-label": "Venue promotions" }, h("h2", {}, "Venue promotions"), cityForm,
    h("p", { class: "muted small" }, "Promotions running now in the city hub (scheduled ones show once they start)."), list, form), reload };
}

function adsSection(city) {
  const list = h("ul", { class: "list", "aria-label": "Advertisements" });
  let editing = null;
  const submit = h("button", { type: "submit" }, "Create ad");
  const form = settingsForm("Advertisement", async (data) => {
    const body = { area: data.get("area").trim(), mediaUrl: data.get("mediaUrl").trim(),
      feeds: data.get("feeds").split("\n").map((f) => f.trim()).filter(Boolean),
      pages: data.get("pages").split(/[\s,]+/).filter(Boolean).map(Number), style: Number(data.get("style")) };
    await api("POST", "/v1/ads", body);
    if (editing) await api("DELETE", `/v1/ads/${enc(editing)}`); // no update in the API: replace
    saved(form, editing ? "Ad updated" : "Ad created");
    editing = null;
    submit.textContent = "Create ad";
    form.reset();
    await reload();
  },
  h("h3", {}, "New advertisement"),
  cityPicker("Area (region)", "area", city?.regionKey, (c) => c.regionKey, (c) => `${c.region}, ${c.countryCode}`),
  field("Ad page or image URL (https)", "mediaUrl", "url", { maxlength: 2000, placeholder: "https://" }),
  h("label", {}, "Feeds, one per line (a: city's all feed, p: pregame, v: venue; then a regular expression)",
    h("textarea", { name: "feeds", rows: 3, required: true, placeholder: "a:Berlin\nv:(Berghain|Watergate)" })),
  field("Pages (numbers, separated by commas)", "pages", "text", { placeholder: "1, 3", pattern: "[0-9 ,]+" }),
  select("Style", "style", [[0, "Its own page"], [1, "Overlay on a clip"]], 0),
  submit);

  function edit(ad) {
    editing = ad.id;
    form.elements.area.value = ad.area;
    form.querySelector('input[list="cities-area"]').value = ad.area.split("$").join(", ");
    form.elements.mediaUrl.value = ad.mediaUrl;
    form.elements.feeds.value = ad.feeds.join("\n");
    form.elements.pages.value = ad.pages.join(", ");
    form.elements.style.value = String(ad.style);
    submit.textContent = "Save changes";
    form.elements.mediaUrl.focus();
  }
  function item(ad) {
    const label = `ad for ${ad.area.split("$").join(", ")} created ${fromNow(ad.createdAt)}`;
    const upload = h("input", { type: "file", accept: "image/jpeg,image/png,text/html", "aria-label": `Upload creative for ${label}` });
    upload.addEventListener("change", async () => {
      if (!upload.files[0]) return;
      const body = new FormData();
      body.append("file", upload.files[0]);
      try { await api("PUT", `/v1/ads/${enc(ad.id)}/creative`, body); toast("Creative uploaded"); await reload(); }
      catch (error) { toast(error.message); }
    });
    return h("li", { class: "card ad" },
      h("div", {}, h("strong", {}, ad.area.split("$").join(", ")), " · ", ad.style === 1 ? "overlay" : "own page",
        h("div", { class: "muted small" }, `Feeds: ${ad.feeds.join("  ")} · pages ${ad.pages.join(", ") || "none"}`),
        h("a", { href: ad.mediaUrl, target: "_blank", rel: "noopener" }, "Open the ad")),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "secondary", "aria-label": `Edit ${label}`, onclick: () => edit(ad) }, "Edit"),
        actionButton("Delete", async () => {
          if (!confirm("Delete this advertisement?")) return;
          await api("DELETE", `/v1/ads/${enc(ad.id)}`);
          await reload();
        }, { class: "secondary", "aria-label": `Delete ${label}` }),
        h("label", { class: "upload" }, "Upload creative", upload)));
  }
  async function reload() {
    const ads = await api("GET", "/v1/ads");
    list.replaceChildren(...(ads.items.length ? ads.items.map(item) : [h("li", { class: "muted" }, "No advertisements yet.")]));
  }
  return { node: h("section", { "aria-label": "Advertisements section" }, h("h2", {}, "Advertisements"), list, form), reload };
}

async function adminScreen() {
  const me = await api("GET", "/v1/me");
  if (me.role !== "admin") return staffOnly("Administration", "Only admins edit promotions and ads.");
  const city = await currentCity(me);
  const promotions = promotionsSection(city);
  const ads = adsSection(city);
  await Promise.all([promotions.reload(), ads.reload()]);
  return [h("h1", {}, "Promotions and ads"), promotions.node, ads.node];
}

export const routes = { moderation: moderationScreen, admin: adminScreen };
