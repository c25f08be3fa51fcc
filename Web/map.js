// A slippy map from the configured tile server (GET /v1/config → mapTileURL, `{z}/{x}/{y}`
// template): 256 px Web-Mercator tiles around a centre, with numbered links for the items.
import { h } from "./ui.js";

const SIZE = 320;

/** Pixel coordinates of `lat, lon` at zoom `z` (Web Mercator, 256 px tiles). */
function pixel(lat, lon, z) {
  const scale = 256 * 2 ** z;
  const sin = Math.sin((lat * Math.PI) / 180);
  return [((lon + 180) / 360) * scale, (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * scale];
}

/** The largest zoom at which every point fits in the map, from 3 to 17. */
function fit(center, points) {
  for (let z = 17; z > 3; z--) {
    const [cx, cy] = pixel(center.lat, center.lon, z);
    if (points.every((p) => { const [x, y] = pixel(p.lat, p.lon, z); return Math.abs(x - cx) < SIZE / 2 - 12 && Math.abs(y - cy) < SIZE / 2 - 12; })) return z;
  }
  return 3;
}

/**
 * A map of `items` ({lat, lon, href, title}) around `center` ({lat, lon}) drawn with tiles from
 * `template`; each item is a numbered link, in the order of the list the caller shows with it.
 */
export function tileMap(template, center, items, label) {
  const z = fit(center, items);
  const [cx, cy] = pixel(center.lat, center.lon, z);
  const left = cx - SIZE / 2, top = cy - SIZE / 2;
  const map = h("div", { class: "tile-map", role: "group", "aria-label": label });
  for (let tx = Math.floor(left / 256); tx <= Math.floor((left + SIZE) / 256); tx++) {
    for (let ty = Math.floor(top / 256); ty <= Math.floor((top + SIZE) / 256); ty++) {
      const src = template.replace("{z}", z).replace("{x}", tx).replace("{y}", ty).replace("{s}", "a");
      map.append(h("img", { src, alt: "", class: "tile", style: `left:${tx * 256 - left}px;top:${ty * 256 - top}px` }));
    }
  }
  map.append(h("span", { class: "tile-me", style: `left:${SIZE / 2}px;top:${SIZE / 2}px`, title: "You" }));
  items.forEach((item, i) => {
    const [x, y] = pixel(item.lat, item.lon, z);
    map.append(h("a", { href: item.href, class: "tile-pin", title: item.title, "aria-label": `${i + 1}. ${item.title}`,
      style: `left:${x - left}px;top:${y - top}px` }, String(i + 1)));
  });
  return map;
}
