// "Notify me on this device" (issue #31 item 1): registers pbp's service worker, asks the
// browser for a push subscription with pbp's VAPID key, and submits it in the page's own
// form (with its form token), so the device is added by an ordinary form action.
"use strict";

function keyBytes(base64url) {
  const padded = (base64url + "===".slice((base64url.length + 3) % 4))
    .replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form[data-push-key]");
  if (!form) return;
  const button = form.querySelector("button");
  const status = form.querySelector("[data-push-status]");
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
    button.disabled = true;
    if (status) status.textContent = "This browser cannot receive push notifications.";
    return;
  }
  form.addEventListener("submit", async (event) => {
    if (form.elements.endpoint.value) return; // filled: let the form go
    event.preventDefault();
    try {
      const registration = await navigator.serviceWorker.register(form.dataset.worker, { scope: "/" });
      await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: keyBytes(form.dataset.pushKey),
      });
      const json = subscription.toJSON();
      form.elements.endpoint.value = json.endpoint;
      form.elements.p256dh.value = json.keys.p256dh;
      form.elements.auth.value = json.keys.auth;
      if (!form.elements.label.value) form.elements.label.value = navigator.userAgent.slice(0, 200);
      form.submit();
    } catch (e) {
      if (status) status.textContent = "Notifications were not allowed: " + e.message;
    }
  });
});
