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
