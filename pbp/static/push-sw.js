// pbp's service worker (issue #31 item 1): shows the notifications pbp pushes, and opens
// the page a notification is about when it is clicked. Served at /sw.js so that its
// scope is the whole site. A push's data is JSON: {"title", "body", "url"}.
"use strict";

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (e) {
    data = { title: "pbp", body: event.data ? event.data.text() : "" };
  }
  event.waitUntil(
    self.registration.showNotification(data.title || "pbp", {
      body: data.body || "",
      data: { url: data.url || "/" },
      tag: data.url || undefined,
    })
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || "/";
  // Only pbp's own pages: a push names its page, and this worker opens nothing else.
  const target = new URL(url, self.location.origin);
  if (target.origin !== self.location.origin) return;
  event.waitUntil(self.clients.openWindow(target.href));
});
