// The entry form (templates/blog/write.html): show the challenge target picker only
// when the mood is Challenging. Progressive enhancement; without scripts the picker
// stays visible and the server checks the choice anyway.
(function () {
  var mood = document.getElementById("mood"), box = document.getElementById("challenge");
  if (!mood || !box) return;
  // The rules' own reading of the mood (noteworthy.CHALLENGING_MOOD_PATTERN), not a copy.
  var challenging = new RegExp(mood.getAttribute("data-challenging") || "^challenging$", "i");
  function sync() { box.hidden = !challenging.test(mood.value); }
  mood.addEventListener("input", sync);
  sync();
})();
