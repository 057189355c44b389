// Knobel web viewer: live standings (server-sent events) and a match's table, step by step.
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

  // A match's table: the step links (buttons, the list of steps, the arrow keys) load the
  // next step's table in place instead of the whole page.
  var table = document.getElementById("table");
  if (!table || !window.fetch || !window.DOMParser) {
    return;
  }
  var asked = 0;
  function go(href) {
    var mine = ++asked;
    fetch(href, { headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.text();
      })
      .then(function (text) {
        if (mine !== asked) {
          return;
        }
        var next = new DOMParser().parseFromString(text, "text/html").getElementById("table");
        if (!next) {
          throw new Error("no table");
        }
        var focused = document.activeElement && document.activeElement.id;
        table.replaceWith(next);
        table = next;
        var old = document.querySelector("#steps [aria-current]");
        if (old) {
          old.removeAttribute("aria-current");
        }
        var line = document.querySelector('#steps li[data-step="' + next.dataset.step + '"]');
        if (line) {
          line.setAttribute("aria-current", "step");
        }
        window.history.replaceState(null, "", href);
        var again = focused && document.getElementById(focused);
        if (again && table.contains(again)) {
          again.focus();
        }
      })
      .catch(function () {
        window.location.href = href;
      });
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-step]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    go(link.href);
  });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    var target = event.target;
    if (target && target.matches && target.matches("input, select, textarea")) {
      return;
    }
    var moves = { ArrowRight: "step-next", ArrowLeft: "step-prev", Home: "step-first", End: "step-last" };
    if (Object.prototype.hasOwnProperty.call(moves, event.key)) {
      event.preventDefault();
      go(document.getElementById(moves[event.key]).href);
    }
  });
})();
