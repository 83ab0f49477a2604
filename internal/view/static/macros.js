// Wikid live macros: {{RecentChanges}}, {{PageCount}} and {{AllPages|prefix=…}}
// render as placeholders so that the page itself stays a cache hit; this
// script fills them from /w/macro/NAME, which has its own short cache life.
// Without JavaScript the placeholder is a link to the special page.
(function () {
  "use strict";
  // bdi isolates a user-supplied title or name, so that right-to-left text
  // in it cannot reorder the list around it.
  function bdi(text) {
    var b = document.createElement("bdi");
    b.textContent = text;
    return b;
  }
  function link(item) {
    var a = document.createElement("a");
    a.href = item.url;
    a.appendChild(bdi(item.title));
    return a;
  }
  function list(items, extra) {
    var ul = document.createElement("ul");
    ul.className = "macro-list";
    items.forEach(function (item) {
      var li = document.createElement("li");
      li.appendChild(link(item));
      if (extra) { extra(li, item); }
      ul.appendChild(li);
    });
    return ul;
  }
  var fill = {
    recentchanges: function (el, data) {
      el.replaceChildren(list(data.changes, function (li, c) {
        var s = document.createElement("span");
        s.className = "muted small";
        s.append(" · ", bdi(c.user), " · " + new Date(c.time).toLocaleString());
        li.appendChild(s);
      }));
    },
    pagecount: function (el, data) {
      el.textContent = String(data.count);
    },
    allpages: function (el, data) {
      el.replaceChildren(list(data.pages));
    }
  };
  // formEncode writes a query value as the server's canonical URLs do (as
  // a browser submits a form), so that the request is not redirected.
  function formEncode(s) {
    return encodeURIComponent(s).replace(/[!'()~]/g, function (c) {
      return "%" + c.charCodeAt(0).toString(16).toUpperCase();
    }).replace(/%20/g, "+");
  }
  document.querySelectorAll(".wikid-macro[data-macro]").forEach(function (el) {
    var name = el.getAttribute("data-macro");
    if (!fill[name]) { return; }
    var url = "/w/macro/" + name;
    var prefix = el.getAttribute("data-prefix");
    if (prefix) { url += "?prefix=" + formEncode(prefix); }
    fetch(url, { credentials: "omit" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.json(); })
      .then(function (data) { fill[name](el, data); })
      .catch(function () { /* keep the fallback link */ });
  });
})();
