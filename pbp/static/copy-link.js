// Invitation links: a read-only field (class "copy-link") selects its whole text on focus,
// ready to copy by hand, and a button with data-copy="<field id>" copies it in one click
// (the invite page, the referee's and GM's lists of open invitations).
// A file, not inline script: the Content-Security-Policy allows no inline script.
(function () {
  "use strict";
  document.querySelectorAll("input.copy-link").forEach(function (field) {
    field.addEventListener("focus", function () { field.select(); });
  });
  function say(button, text) {
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    button.textContent = text;
    window.setTimeout(function () { button.textContent = label; }, 2000);
  }
  function copyByHand(field, button) {
    field.focus();
    field.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    say(button, ok ? "Copied" : "Press Ctrl+C to copy");
  }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function (event) {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field) { return; }
      event.preventDefault();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(
          function () { say(button, "Copied"); },
          function () { copyByHand(field, button); }
        );
      } else {
        copyByHand(field, button);
      }
    });
  });
}());
