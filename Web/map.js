// Slippy maps with Leaflet (Web/vendor/leaflet): tiles from the server's tile server (GET /v1/config
// → mapTileURL, a `{z}/{x}/{y}` template, and mapAttribution, the credit shown on every map), pins
// that are links. This module, Leaflet and the maps' stylesheets load on demand, at the first map.
import { api } from "./api.js";
import { h } from "./ui.js";

let config;
/** The tile template and credit the server is configured with, or null when maps are off (asked once). */
export function mapConfig() {
  config ??= api("GET", "/v1/config").then((c) => c.mapTileURL ? { tiles: c.mapTileURL, attribution: c.mapAttribution || "" } : null,
    () => { config = null; return null; });
  return config;
}

/** Adds a script or stylesheet to the page and waits for it. */
const load = (tag, attributes) => new Promise((resolve, reject) =>
  document.head.append(h(tag, { ...attributes, onload: resolve, onerror: () => reject(new Error("The map did not load.")) })));

let leaflet;
/** Leaflet (`window.L`) with its stylesheet and ours, fetched once. */
function loadLeaflet() {
  leaflet ??= Promise.all([load("script", { src: "/app/vendor/leaflet/leaflet.js" }),
    load("link", { rel: "stylesheet", href: "/app/vendor/leaflet/leaflet.css" }),
    load("link", { rel: "stylesheet", href: "/app/map.css" })])
    .then(() => window.L, (error) => { leaflet = null; throw error; });
  return leaflet;
}

/** `text` as HTML (Leaflet shows the credit as HTML; ours is plain text). */
const escaped = (text) => Object.assign(document.createElement("span"), { textContent: text }).innerHTML;

/** Draws the map in `box` once it is on the page, keeps it sized, and removes it with the box. */
function draw(L, box, config, pins, { you, numbered }) {
  let map = null;
  const watch = new ResizeObserver(() => {
    if (!box.isConnected) { if (map) { watch.disconnect(); map.remove(); } return; }
    if (map) return map.invalidateSize();
    if (!box.clientWidth) return;
    map = L.map(box, { scrollWheelZoom: false, trackResize: false, attributionControl: !!config.attribution });
    map.attributionControl?.setPrefix(false);
    map.fitBounds([...pins, ...(you ? [you] : [])].map((p) => [p.lat, p.lon]), { padding: [32, 32], maxZoom: 16 });
    L.tileLayer(config.tiles, { attribution: escaped(config.attribution), maxZoom: 19 }).addTo(map);
    if (you) L.marker([you.lat, you.lon], { icon: L.divIcon({ className: "map-you", iconSize: [16, 16] }),
      title: you.title, interactive: false, keyboard: false }).addTo(map);
    pins.forEach((pin, i) => {
      const link = h("a", { href: pin.href, class: "map-pin", title: pin.title, "aria-label": numbered ? `${i + 1}. ${pin.title}` : pin.title,
        target: pin.external ? "_blank" : null, rel: pin.external ? "noopener" : null }, numbered ? String(i + 1) : "");
      L.marker([pin.lat, pin.lon], { icon: L.divIcon({ html: link, className: "map-marker", iconSize: [44, 44] }), keyboard: false }).addTo(map);
    });
  });
  watch.observe(box);
}

/**
 * A map of `pins` ({lat, lon, href, title, external}), each a link named by its title — numbered
 * in the order of the list shown with it when `numbered` — and of `you` ({lat, lon, title}) when
 * given, fitted to them all, for a `config` from mapConfig(). The box comes at once; Leaflet draws
 * in it when it is on the page.
 */
export function tileMap(config, pins, { label, you = null, numbered = false }) {
  const box = h("div", { class: "map", role: "group", "aria-label": label });
  loadLeaflet().then((L) => draw(L, box, config, pins, { you, numbered }),
    (error) => box.replaceChildren(h("p", { class: "muted" }, error.message)));
  return box;
}

/** A small map of `place` with its pin (a link to directions), or null without tiles or location. */
export async function placeMap(place) {
  const settings = await mapConfig();
  if (!settings || !place.location) return null;
  return tileMap(settings, [{ ...place.location, href: place.googleMapsURL, title: `Directions to ${place.name}`, external: true }],
    { label: `Map of ${place.name}` });
}
