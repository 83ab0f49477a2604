// Wikid title suggestions for the header's search box: while a reader
// types, the titles that start with the text (ignoring case and accents)
// are listed under the box, from /w/rest.php/v1/search/title, with a last
// entry that searches for the text in pages. The box is an ARIA combobox
// (WAI-ARIA APG, list autocomplete). Without JavaScript the form still
// searches, and goes straight to a page whose title matches.
(function () {
  "use strict";
  var input = document.getElementById("search-q");
  if (!input || !input.form || !window.fetch || !window.AbortController || !input.replaceChildren) { return; }
  var LIMIT = 8;
  var DELAY = 120; // milliseconds without a keystroke before asking

  var list = document.createElement("ul");
  list.id = "search-suggestions";
  list.className = "suggestions";
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", "Search suggestions");
  list.hidden = true;
  input.form.appendChild(list);
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", list.id);
  input.setAttribute("aria-expanded", "false");

  var timer = 0;
  var pending = null; // the AbortController of the request in flight
  var shown = null; // the query the list was made for
  var options = []; // { el, url } in list order
  var active = -1; // the highlighted option; -1: none (the text box)
  // Anonymous requests get the answers the edge cache shares; a wiki that
  // only its users may read refuses them, and then the session is sent.
  var credentials = "omit";

  // formEncode writes a query value as the server's canonical URLs do (as
  // a browser submits a form), so that the answer can come from the cache.
  function formEncode(s) {
    return encodeURIComponent(s).replace(/[!'()~]/g, function (c) {
      return "%" + c.charCodeAt(0).toString(16).toUpperCase();
    }).replace(/%20/g, "+");
  }
  // keyPath escapes a title key as the server's links do (wiki.EscapeKey:
  // Go's url.PathEscape per segment), so that following one costs no 301.
  function keyPath(key) {
    return key.split("/").map(function (seg) {
      return encodeURIComponent(seg).replace(/[!'()*]/g, function (c) {
        return "%" + c.charCodeAt(0).toString(16).toUpperCase();
      }).replace(/%(24|26|2B|3A|3D|40)/g, function (m, hex) {
        return String.fromCharCode(parseInt(hex, 16));
      });
    }).join("/");
  }
  // bdi isolates a title or the reader's text, so that right-to-left text
  // in it cannot reorder the entry around it. Text only, never markup.
  function bdi(text) {
    var b = document.createElement("bdi");
    b.textContent = text;
    return b;
  }

  // matched returns how much of title the text q matched (in UTF-16 units),
  // folding case and accents as the server does for the common cases; 0
  // when it cannot tell (the title is then shown without emphasis).
  function fold(s) { return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase(); }
  function matched(title, q) {
    var want = fold(q), got = "", i = 0;
    while (i < title.length && got.length < want.length) {
      var ch = String.fromCodePoint(title.codePointAt(i));
      got += fold(ch);
      i += ch.length;
    }
    while (i < title.length && fold(title.charAt(i)) === "") { i++; } // accents of the last letter
    return got === want ? i : 0;
  }
  function titleText(title, q) {
    var n = matched(title, q);
    var b = bdi(title.slice(n));
    if (n > 0) {
      var m = document.createElement("span");
      m.className = "match";
      m.textContent = title.slice(0, n);
      b.prepend(m);
    }
    return b;
  }

  function open() {
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
  }
  function close() {
    clearTimeout(timer);
    if (pending) {
      var p = pending;
      pending = null;
      p.abort();
    }
    setActive(-1);
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
  }
  function setActive(i) {
    if (active >= 0 && options[active]) { options[active].el.setAttribute("aria-selected", "false"); }
    active = i;
    if (i < 0) {
      input.removeAttribute("aria-activedescendant");
      return;
    }
    options[i].el.setAttribute("aria-selected", "true");
    input.setAttribute("aria-activedescendant", options[i].el.id);
  }

  // option makes one entry: a link, so that a click, a middle click or a
  // long press does what it does on any link.
  function option(content, url, className) {
    var li = document.createElement("li");
    li.id = "search-suggestion-" + options.length;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    if (className) { li.className = className; }
    var a = document.createElement("a");
    a.href = url;
    a.tabIndex = -1;
    a.append.apply(a, content);
    li.appendChild(a);
    options.push({ el: li, url: url });
    return li;
  }
  function show(q, pages) {
    setActive(-1);
    shown = q;
    options = [];
    var items = pages.map(function (p) {
      return option([titleText(String(p.title), q)], "/wiki/" + keyPath(String(p.key)));
    });
    var what = bdi(q);
    what.className = "q";
    items.push(option(["Search for pages containing ", what], "/wiki/Special:Search?q=" + formEncode(q), "containing"));
    list.replaceChildren.apply(list, items);
    open();
  }

  function ask(q) {
    if (pending) { pending.abort(); }
    var ctrl = new AbortController();
    pending = ctrl;
    var url = "/w/rest.php/v1/search/title?limit=" + LIMIT + "&q=" + formEncode(q);
    function get() { return fetch(url, { credentials: credentials, signal: ctrl.signal }); }
    get()
      .then(function (r) {
        if ((r.status === 401 || r.status === 403) && credentials === "omit") {
          credentials = "same-origin";
          return get();
        }
        return r;
      })
      .then(function (r) { if (!r.ok) { throw new Error(String(r.status)); } return r.json(); })
      .then(function (data) {
        if (pending !== ctrl) { return; } // a later keystroke asked again
        pending = null;
        show(q, Array.isArray(data.pages) ? data.pages : []);
      })
      .catch(function () {
        // Aborted, or no answer: typing and the form go on working.
        if (pending === ctrl) { close(); }
      });
  }
  function update() {
    clearTimeout(timer);
    var q = input.value.trim();
    if (q === "") {
      close();
      shown = null;
    } else if (q === shown && options.length) {
      open();
    } else {
      ask(q);
    }
  }

  input.addEventListener("input", function () {
    setActive(-1);
    clearTimeout(timer);
    timer = setTimeout(update, DELAY);
  });
  input.addEventListener("keydown", function (e) {
    if (e.isComposing || e.keyCode === 229) { return; } // an input method is composing
    switch (e.key) {
      case "ArrowDown":
      case "ArrowUp":
        e.preventDefault();
        if (list.hidden) {
          update();
          return;
        }
        // Past either end the highlight goes back to the text box.
        var i = active + (e.key === "ArrowDown" ? 1 : -1);
        if (i >= options.length) {
          i = -1;
        } else if (i < -1) {
          i = options.length - 1;
        }
        setActive(i);
        break;
      case "Enter":
        if (!list.hidden && active >= 0) {
          e.preventDefault();
          var url = options[active].url;
          close();
          window.location.assign(url);
        } // else the form is sent: a matching title opens at once
        break;
      case "Escape":
        if (!list.hidden) {
          e.preventDefault(); // keep the text (a search box clears on Escape)
          close();
        }
        break;
    }
  });
  input.addEventListener("blur", close);
  input.addEventListener("focus", function () {
    if (shown !== null && shown === input.value.trim() && options.length) { open(); }
  });
  // A press on the list must not take the focus from the box (which would
  // close the list before the click lands).
  list.addEventListener("mousedown", function (e) { e.preventDefault(); });
  // A page restored from the back/forward cache shows no stale list.
  window.addEventListener("pageshow", function (e) { if (e.persisted) { close(); } });
})();
