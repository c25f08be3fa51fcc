// Where the user is: the city picked in PartyUP, else the city at the browser's position, else the
// profile's home city; and the geocoder look-ups behind it. Shared by the PartyUP feeds, posting a
// clip (post.js), settings and the sports search, none of which it imports.
import { api } from "./api.js";
import { position } from "./ui.js";
import { enc } from "./format.js";

const store = window.localStorage;
const CITY = "tonight.partyup.city";

/** Remembers the city (a key) picked by name, over the position's. */
export const pickCity = (key) => store.setItem(CITY, key);

/** Goes back to the position's city. */
export const forgetCity = () => store.removeItem(CITY);

/** The city at `near` ("lat,lon"), or null. */
export function cityAt(near) {
  const [lat, lon] = near.split(",");
  return api("GET", `/v1/geocode/reverse?lat=${lat}&lon=${lon}`).catch(() => null);
}

/** The geocoder's best match for a city's name (undefined when none). */
export async function findCity(name) {
  return (await api("GET", `/v1/geocode?q=${enc(name)}&limit=1`)).items[0];
}

/**
 * Where the user is: `near` ("lat,lon" or null) and the city whose hub and feeds to show — the one
 * they picked, else the city at their position, else their profile's home city (a key or a name).
 */
export async function locate() {
  const near = await position();
  const picked = store.getItem(CITY);
  if (picked) return { near, cityKey: picked, cityName: picked.split("$")[0], picked: true };
  let city = null;
  if (near) city = await cityAt(near);
  if (!city) {
    const home = (await api("GET", "/v1/me")).homeCity;
    if (home?.split("$").length === 3) return { near, cityKey: home, cityName: home.split("$")[0] };
    if (home) city = await findCity(home);
  }
  return { near, cityKey: city?.key || null, cityName: city?.name || null };
}
