// Small DOM helpers shared by the screens.
import { ApiError } from "./api.js";

/** Builds an element: h("p", {class: "muted"}, "text", child…). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (value !== false && value != null) element.setAttribute(key, value === true ? "" : value);
  }
  element.append(...children.flat().filter((c) => c != null && c !== false));
  return element;
}

export function toast(text) {
  const box = document.getElementById("toast");
  box.textContent = text;
  box.classList.add("show");
  setTimeout(() => box.classList.remove("show"), 3000);
}

/** Shows a problem next to a form: the detail and each field's message. */
export function showProblem(form, error) {
  form.querySelector(".error")?.remove();
  const messages = error instanceof ApiError && error.fields.length
    ? error.fields.map((f) => `${f.field}: ${f.message}`) : [error.message];
  form.append(h("p", { class: "error", role: "alert" }, messages.join(" · ")));
}

export function field(label, name, type = "text", extra = {}) {
  return h("label", {}, label, h("input", { name, type, required: true, ...extra }));
}

