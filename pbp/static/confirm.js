// Forms whose action cannot be taken back (close or resolve a turn, post an event, end a
// campaign, delete a post) carry data-confirm="question": ask it before sending.
// A file, not inline script: the Content-Security-Policy allows no inline script.
document.addEventListener("submit", function (event) {
  "use strict";
  var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) { event.preventDefault(); }
}, true);
