/* Hardset: the small behaviours pages ask for with data- attributes.
 *
 * The Content Security Policy allows no inline handlers or style attributes, so templates mark
 * elements and this file, loaded on every page, binds them. Listeners sit on the document, so
 * content swapped in by htmx works without re-binding.
 *   data-confirm="question"   on a form: ask before submitting
 *   data-select-on-focus      on an input: select its text when focused (links to copy)
 *   data-autosubmit           on a form control: submit its form when it changes
 *   data-select-all="sel"     on a checkbox: check or uncheck every box matching sel
 *   data-left-percent="n"     place an absolutely positioned element n% from the left
 * And: an error answer to an htmx request that names where it goes (HX-Retarget, e.g. the
 * page's #request-error for a request over the size limit: core/uploads.py) is shown there;
 * htmx swaps no error answer by default, so the user saw nothing happen.
 */
(function () {
  "use strict";

  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });

  document.addEventListener("focusin", function (event) {
    if (event.target.matches("input[data-select-on-focus]")) event.target.select();
  });

  document.addEventListener("change", function (event) {
    const control = event.target;
    if (control.matches("[data-autosubmit]") && control.form) control.form.requestSubmit();
    if (control.matches("input[type=checkbox][data-select-all]")) {
      for (const box of document.querySelectorAll(control.dataset.selectAll)) {
        box.checked = control.checked;
      }
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    const xhr = event.detail.xhr;
    if (xhr.status >= 400 && xhr.getResponseHeader("HX-Retarget")) event.detail.shouldSwap = true;
  });

  // Setting element.style from a script is allowed; a style="" attribute is not.
  function place(root) {
    for (const el of root.querySelectorAll("[data-left-percent]")) {
      el.style.left = Number(el.dataset.leftPercent) + "%";
    }
  }
  document.addEventListener("DOMContentLoaded", function () { place(document); });
  document.addEventListener("htmx:load", function (event) { place(event.target); });
})();
