// Knobel web viewer: live standings (server-sent events) and the step-through of a match.
// Every page works without this script; it only enhances them.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // Live standings: the server sends the rendered live part of the page when it changes.
  var live = document.getElementById("live");
  if (live && live.dataset.events && window.EventSource) {
    var source = new EventSource(live.dataset.events);
    source.addEventListener("standings", function (event) {
      live.innerHTML = event.data;
      live.dataset.updates = String(Number(live.dataset.updates || "0") + 1);
    });
  }

  // Step-through: one step at a time, buttons and arrow keys.
  var list = document.getElementById("steps");
  var controls = document.getElementById("step-controls");
  if (!list || !controls) {
    return;
  }
  var steps = list.querySelectorAll("li.step");
  if (steps.length === 0) {
    return;
  }
  var position = document.getElementById("step-pos");
  var current = 0;
  function show(n) {
    n = Math.max(0, Math.min(steps.length - 1, n));
    steps[current].classList.remove("current");
    steps[current].removeAttribute("aria-current");
    current = n;
    steps[current].classList.add("current");
    steps[current].setAttribute("aria-current", "step");
    position.textContent = "Step " + (current + 1) + " of " + steps.length;
    list.dataset.current = String(current);
  }
  controls.hidden = false;
  document.getElementById("step-first").addEventListener("click", function () { show(0); });
  document.getElementById("step-prev").addEventListener("click", function () { show(current - 1); });
  document.getElementById("step-next").addEventListener("click", function () { show(current + 1); });
  document.getElementById("step-last").addEventListener("click", function () { show(steps.length - 1); });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    var target = event.target;
    if (target && target.matches && target.matches("input, select, textarea")) {
      return;
    }
    var moves = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: steps.length - 1 };
    if (Object.prototype.hasOwnProperty.call(moves, event.key)) {
      event.preventDefault();
      show(moves[event.key]);
    }
  });
  show(0);
})();
