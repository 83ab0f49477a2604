// The watch star: a click posts the watch (or unwatch) form with the
// session's CSRF token (the one of the user bar's logout form) and turns
// the star over, without leaving the page. Without JavaScript the link
// opens the confirmation form.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("nav.tabs a.watch");
    var token = document.querySelector("nav.user input[name=csrf]");
    if (!a || !token || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) { return; }
    e.preventDefault();
    if (a.getAttribute("aria-busy") === "true") { return; }
    a.setAttribute("aria-busy", "true");
    var body = new URLSearchParams();
    body.set("csrf", token.value);
    fetch(a.href, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "X-Requested-With": "wikid" }
    }).then(function (res) {
      var state = res.headers.get("X-Wikid-Watch");
      if (res.status !== 204 || !state) { throw new Error("status " + res.status); }
      var watched = state === "watched";
      a.className = watched ? "watch watched" : "watch";
      a.textContent = watched ? "Unwatch" : "Watch";
      a.href = a.href.replace(/action=(un)?watch/, watched ? "action=unwatch" : "action=watch");
      a.title = watched ? "Added to your watchlist" : "Removed from your watchlist";
    }).catch(function () {
      window.location.href = a.href; // the form says what went wrong
    }).finally(function () {
      a.removeAttribute("aria-busy");
    });
  });
})();
