// Drafts that survive (issue #29 item 5): a write form with data-draft-url (the entry,
// note and forum-post forms) is saved on the server every 10 s while its text changes,
// and once more when the page is left (a closed tab). It sends the same form as its
// "Save draft" button, which works without this script (pbp.web.saved_drafts); the header
// X-Draft-Autosave asks for a 204 instead of the form's page.
(function () {
  var PERIOD = 10000;
  var SKIP = { csrf_token: 1, form_token: 1, client_token: 1 };

  function snapshot(form) {
    var parts = [];
    new FormData(form).forEach(function (value, name) {
      if (!SKIP[name] && typeof value === "string") parts.push(name + "=" + value);
    });
    return parts.join("&");
  }

  function clock() {
    return new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function keep(form) {
    var url = form.getAttribute("data-draft-url");
    var status = form.querySelector("[data-draft-status]");
    var saved = snapshot(form), inflight = null, sent = false;

    function say(text) { if (status) status.textContent = text; }

    function save(leaving) {
      var now = snapshot(form);
      if (sent || inflight || now === saved) return;
      inflight = fetch(url, {
        method: "POST",
        body: new FormData(form),
        credentials: "same-origin",
        redirect: "manual",
        keepalive: !!leaving,
        headers: { "X-Draft-Autosave": "1" }
      }).then(function (answer) {
        if (answer.status === 204) {
          saved = now;
          say("Draft saved at " + clock() + ".");
        } else if (answer.type === "opaqueredirect" || answer.status === 400) {
          // Sent to the login page, or the form's CSRF token belongs to a session that
          // ended: the last draft saved is kept, what was typed since is only here.
          say("Draft not saved: your session has ended. The draft saved before is kept; " +
              "copy what you typed since, then log in again.");
        } else {
          say("Draft not saved (" + answer.status + "): it is tried again in a moment.");
        }
      }, function () {
        say("Draft not saved: no connection. It is tried again in a moment.");
      }).then(function () { inflight = null; });
    }

    // A save still on its way when the form is sent could land after the post and bring
    // the posted text back as a draft: the form waits for it, then goes.
    form.addEventListener("submit", function (event) {
      if (inflight) {
        event.preventDefault();
        var submitter = event.submitter;
        inflight.then(function () { form.requestSubmit(submitter); });
        return;
      }
      sent = true;
    });
    window.addEventListener("pageshow", function (event) { if (event.persisted) sent = false; });
    window.addEventListener("pagehide", function () { save(true); });
    setInterval(save, PERIOD);
  }

  Array.prototype.forEach.call(document.querySelectorAll("form[data-draft-url]"), keep);
})();
