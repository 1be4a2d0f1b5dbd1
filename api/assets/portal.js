// TNS portal: what htmx does not do by itself. No framework, no build step.
"use strict";
// After htmx swaps in a form with errors, move focus to its first invalid field (and to the
// message otherwise), so keyboard and screen-reader users land where the change is.
document.addEventListener("htmx:afterSwap", (event) => {
  const target = event.detail.target;
  const invalid = target.querySelector('[aria-invalid="true"]');
  if (invalid) {
    invalid.focus();
  } else if (target.id === "flash" && target.firstElementChild) {
    target.setAttribute("tabindex", "-1");
    target.focus();
  }
});

// Place pickers: an input marked data-picker="city" or "district" fills its <datalist> with
// the places matching what is typed (GET /reference/places). A district input with
// data-city-field looks only in the province typed in that field of its form.
(() => {
  const waiting = new WeakMap();
  const lookUp = async (input) => {
    const params = new URLSearchParams({ kind: input.dataset.picker, q: input.value.trim().slice(0, 40) });
    const cityField = input.dataset.cityField;
    const city = cityField && input.form ? input.form.elements.namedItem(cityField) : null;
    if (city && city.value.trim()) {
      params.set("city", city.value.trim());
    }
    const res = await fetch("/reference/places?" + params.toString(), { credentials: "same-origin" });
    if (!res.ok || !input.list) {
      return;
    }
    // The answer is the server's escaped markup of <option>s only.
    const parsed = new DOMParser().parseFromString("<datalist>" + (await res.text()) + "</datalist>", "text/html");
    input.list.replaceChildren(...parsed.querySelectorAll("option"));
  };
  const soon = (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || !input.dataset.picker || !input.list) {
      return;
    }
    clearTimeout(waiting.get(input));
    waiting.set(input, setTimeout(() => lookUp(input).catch(() => {}), 200));
  };
  document.addEventListener("input", soon);
  document.addEventListener("focusin", soon);
})();
// Journeys: the passenger table's "add a row" copies the last row (emptied, renumbered) in
// place instead of asking the server; "remove" hides a row at once (its checkbox still tells
// the server, so the table works the same without scripts).
document.addEventListener("click", (event) => {
  const add = event.target.closest("button[data-add-row]");
  if (!add) return;
  const body = add.form && add.form.querySelector("tbody[data-rows]");
  const rows = body ? body.querySelectorAll("tr[id^='row-']") : [];
  if (!rows.length) return;
  event.preventDefault();
  const next = rows.length;
  const copy = rows[rows.length - 1].cloneNode(true);
  copy.id = `row-${next + 1}`;
  copy.classList.remove("error-row");
  copy.querySelector("th").textContent = String(next + 1);
  copy.querySelectorAll("[name]").forEach((el) => {
    el.name = el.name.replace(/^r\d+\./, `r${next}.`);
    if (el.id) el.id = el.id.replace(/^r\d+-/, `r${next}-`);
    if (el.type === "hidden" && el.name.endsWith(".id")) el.remove();
    else if (el.type === "checkbox") el.checked = false;
    else if (el.tagName === "SELECT") el.selectedIndex = 0;
    else el.value = "";
    el.removeAttribute("aria-invalid");
    el.removeAttribute("aria-describedby");
  });
  copy.querySelectorAll("label[for]").forEach((l) => { l.htmlFor = l.htmlFor.replace(/^r\d+-/, `r${next}-`); });
  copy.querySelectorAll(".error-text").forEach((p) => p.remove());
  body.appendChild(copy);
  const first = copy.querySelector("input, select");
  if (first) first.focus();
});
document.addEventListener("change", (event) => {
  const box = event.target;
  if (box.type === "checkbox" && /^r\d+\.remove$/.test(box.name)) {
    box.closest("tr").classList.toggle("removed", box.checked);
  }
});
