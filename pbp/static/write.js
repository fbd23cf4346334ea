// The entry form (templates/blog/write.html): show the challenge target picker only
// when the mood is Challenging. Progressive enhancement; without scripts the picker
// stays visible and the server checks the choice anyway.
(function () {
  var mood = document.getElementById("mood"), box = document.getElementById("challenge");
  if (!mood || !box) return;
  function sync() { box.hidden = mood.value.trim().toLowerCase().replace(/[^a-z]/g, "") !== "challenging"; }
  mood.addEventListener("input", sync);
  sync();
})();
