// Tickets Tonight: events tonight / this weekend near me, with category and budget filters, and
// an event's detail (time on the venue's clock, prices, tickets, maps, follow, going).
import { api } from "./api.js";
import { h, toast, position } from "./ui.js";

const money = (e) => e.minPrice == null ? "" :
  `${e.minPrice}${e.maxPrice != null && e.maxPrice !== e.minPrice ? `–${e.maxPrice}` : ""} ${e.currency || ""}`.trim();
const when = (e) => `${e.localDate}${e.localTime ? " " + e.localTime : ""} (${e.timeZone})`;

function card(event) {
  return h("li", { class: "card" },
    h("a", { href: `#/event/${encodeURIComponent(event.id)}` }, h("strong", {}, event.name)),
    h("div", { class: "muted" }, `${when(event)} · ${event.place.name}`,
      event.distanceMeters != null ? ` · ${(event.distanceMeters / 1000).toFixed(1)} km` : "",
      money(event) ? ` · ${money(event)}` : ""));
}

export async function eventsScreen() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const near = params.get("near") || (await position());
  const query = new URLSearchParams({ when: params.get("when") || "tonight", limit: "50" });
  if (near) { query.set("near", near); query.set("radius", params.get("radius") || "20000"); query.set("sort", "distance"); }
  for (const key of ["category", "maxPrice"]) if (params.get(key)) query.set(key, params.get(key));
  const [page, categories] = await Promise.all([api("GET", `/v1/events?${query}`), api("GET", "/v1/categories")]);
  const filters = h("form", { "aria-label": "Filters", onsubmit: (e) => {
    e.preventDefault();
    const data = new URLSearchParams([...new FormData(e.target)].filter(([, v]) => v !== ""));
    if (near) data.set("near", near);
    location.hash = `#/events?${data}`;
  } },
    h("label", {}, "When", h("select", { name: "when" },
      ...["tonight", "weekend"].map((w) => h("option", { value: w, selected: query.get("when") === w }, w)))),
    h("label", {}, "Category", h("select", { name: "category" }, h("option", { value: "" }, "Any"),
      ...categories.items.map((c) => h("option", { value: c.id, selected: params.get("category") === c.id }, c.name)))),
    h("label", {}, "Budget (max price)", h("input", { name: "maxPrice", type: "number", min: 0, value: params.get("maxPrice") || "" })),
    h("button", { type: "submit" }, "Show"));
  return [h("h1", {}, query.get("when") === "weekend" ? "This weekend" : "Tonight"),
    near ? null : h("p", { class: "muted" }, "Allow location to sort by distance."),
    filters,
    page.items.length ? h("ul", { class: "list" }, page.items.map(card)) : h("p", { class: "muted" }, "Nothing found.")];
}

export async function eventScreen(id) {
  const event = await api("GET", `/v1/events/${encodeURIComponent(id)}`);
  const attend = (status) => async () => {
    try {
      await api("PUT", `/v1/events/${encodeURIComponent(id)}/attendance`, { status });
      toast(status === "going" ? "You're going" : "Following");
    } catch (error) { toast(error.message); }
  };
  return [h("h1", {}, event.name),
    h("p", {}, when(event)),
    h("p", {}, event.place.name, event.place.address?.city ? `, ${event.place.address.city}` : ""),
    money(event) ? h("p", {}, money(event)) : null,
    event.performers.length ? h("p", { class: "muted" }, event.performers.map((p) => p.name).join(", ")) : null,
    h("p", {}, h("a", { href: event.place.appleMapsURL, rel: "noopener", target: "_blank" }, "Apple Maps"), " · ",
      h("a", { href: event.place.googleMapsURL, rel: "noopener", target: "_blank" }, "Google Maps"),
      event.ticketURL ? [" · ", h("a", { href: event.ticketURL, rel: "noopener", target: "_blank" }, "Tickets")] : null),
    h("p", {}, h("button", { type: "button", onclick: attend("going") }, "Going"), " ",
      h("button", { type: "button", class: "secondary", onclick: attend("following") }, "Follow"))];
}

export const routes = { "events": eventsScreen, "event": eventScreen };
