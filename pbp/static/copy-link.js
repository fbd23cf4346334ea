// A read-only link field (class "copy-link") selects its whole text on focus, ready to
// copy: the invite page's link to hand to a player.
document.querySelectorAll("input.copy-link").forEach(function (field) {
  field.addEventListener("focus", function () { field.select(); });
});
