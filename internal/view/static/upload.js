// Special:Upload: drop a file on the form, and see the upload's progress.
// The form works without this script (a plain multipart POST); with it,
// the file is sent by XMLHttpRequest (whose upload reports progress) with
// the session's CSRF token, and the browser goes to the file's page when
// the server answers 201, or shows the server's message in the form.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  if (!form) { return; }
  var input = document.getElementById("f-file");
  var zone = document.getElementById("dropzone");
  var dest = document.getElementById("f-dest");
  var shown = document.getElementById("file-name");
  var errorBox = document.getElementById("upload-error");
  var progress = document.getElementById("upload-progress");
  var bar = progress.querySelector("progress");
  var status = document.getElementById("upload-status");
  var button = form.querySelector("button[type=submit]");
  var maxBytes = Number(form.getAttribute("data-max-bytes")) || 0;
  var autoName = ""; // the name this script put in dest

  function size(n) {
    if (n >= 1048576) { return (n / 1048576).toFixed(1) + " MiB"; }
    if (n >= 1024) { return (n / 1024).toFixed(1) + " KiB"; }
    return n + " bytes";
  }
  // sentence makes a message of the server's, worded for its API ("the
  // file is …"), a sentence for the form.
  function sentence(msg) {
    msg = msg.charAt(0).toUpperCase() + msg.slice(1);
    return /[.!?]$/.test(msg) ? msg : msg + ".";
  }
  function fail(msg) {
    errorBox.textContent = sentence(msg);
    errorBox.hidden = false;
    progress.hidden = true;
    button.disabled = false;
    // The message stands above the form: on a phone the button just
    // pressed is a screen or more below it.
    errorBox.scrollIntoView({ block: "nearest" });
  }
  function chosen() {
    var f = input.files && input.files[0];
    if (!f) { shown.textContent = ""; return; }
    shown.textContent = f.name + " · " + size(f.size);
    // The name follows the chosen file until the user types one.
    if (!dest.value || dest.value === autoName) { dest.value = autoName = f.name; }
    if (maxBytes && f.size > maxBytes) {
      fail("The file is larger than this wiki’s upload limit of " + form.getAttribute("data-max-size") + "; make it smaller first.");
    } else {
      errorBox.hidden = true;
    }
  }
  // With the script, the drop zone's label is the button (the input stays
  // focusable, hidden) and the chosen file is named under it.
  zone.classList.add("scripted");
  input.addEventListener("change", chosen);
  ["dragenter", "dragover"].forEach(function (ev) {
    zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (ev) {
    zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.remove("over"); });
  });
  zone.addEventListener("drop", function (e) {
    if (!e.dataTransfer || !e.dataTransfer.files.length) { return; }
    input.files = e.dataTransfer.files;
    chosen();
  });
  form.addEventListener("submit", function (e) {
    var f = input.files && input.files[0];
    if (!f || typeof XMLHttpRequest === "undefined" || typeof FormData === "undefined") { return; }
    e.preventDefault();
    if (maxBytes && f.size > maxBytes) { chosen(); return; }
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-CSRF-Token", form.elements.csrf.value);
    xhr.upload.addEventListener("progress", function (ev) {
      if (!ev.lengthComputable) { return; }
      var pct = Math.round(100 * ev.loaded / ev.total);
      bar.value = pct;
      status.textContent = pct < 100 ? "Uploading… " + pct + "% of " + size(f.size) : "Checking the file…";
    });
    xhr.addEventListener("load", function () {
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (err) { /* not JSON */ }
      if ((xhr.status === 201 || xhr.status === 200) && body && body.url) {
        status.textContent = "Uploaded.";
        window.location.href = body.url;
        return;
      }
      var msg = body && body.messageTranslations && body.messageTranslations.en;
      fail(msg || "The upload failed (HTTP " + xhr.status + "); try again.");
    });
    xhr.addEventListener("error", function () { fail("The connection was lost during the upload; try again."); });
    errorBox.hidden = true;
    progress.hidden = false;
    bar.value = 0;
    status.textContent = "Uploading…";
    button.disabled = true;
    xhr.send(new FormData(form));
  });
})();
