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
  // A deadline's "(04:42 your time)" (pbp.web.times.deadline_tag): the reader's own time,
  // with the day when it differs from the one shown, hidden when it is the same time.
  var day = new Intl.DateTimeFormat("en-GB", { weekday: "long", day: "numeric", month: "long" });
  function two(n) { return (n < 10 ? "0" : "") + n; }
  document.querySelectorAll(".your-time time[data-shown]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    if (isNaN(when)) { return; }
    var date = when.getFullYear() + "-" + two(when.getMonth() + 1) + "-" + two(when.getDate());
    var clock = two(when.getHours()) + ":" + two(when.getMinutes());
    var shown = el.getAttribute("data-shown");
    var wrap = el.parentNode;
    if (date + "T" + clock === shown) { wrap.hidden = true; return; }
    el.textContent = (shown.slice(0, 10) === date ? "" : day.format(when) + ", ") + clock + " your time";
    wrap.hidden = false;
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
