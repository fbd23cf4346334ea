// Shows each <time class="local" datetime="..."> in the reader's own time zone, and keeps
// each <span class="countdown" data-deadline="..."> counting down. Loaded as a file: the
// Content-Security-Policy allows no inline script.
(function () {
  "use strict";
  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    timeZoneName: "short"
  });
  document.querySelectorAll("time.local[datetime]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    if (!isNaN(when)) { el.textContent = fmt.format(when) + " (your time)"; }
  });
  function left(ms) {
    var minutes = Math.floor(ms / 60000);
    if (minutes <= 0) { return "the deadline has passed"; }
    var days = Math.floor(minutes / 1440), hours = Math.floor((minutes % 1440) / 60);
    if (days) { return "closes in " + days + (days > 1 ? " days " : " day ") + hours + " h"; }
    if (hours) { return "closes in " + hours + " h " + (minutes % 60) + " min"; }
    return "closes in " + minutes + " min";
  }
  function tick() {
    document.querySelectorAll(".countdown[data-deadline]").forEach(function (el) {
      el.textContent = left(new Date(el.getAttribute("data-deadline")) - new Date());
    });
  }
  tick();
  setInterval(tick, 30000);
})();
