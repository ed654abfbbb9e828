// Live table page: re-renders the server's HTML fragment on every event from /api/events,
// and sends bids, calls and corrections as CSRF-protected form posts without a reload.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) return;
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var lang = document.body.dataset.lang;
  var refreshing = null;   // a fetch of the live part in flight ({again: true} to fetch once more)
  var pending = false;     // an update waited while someone was typing

  function busyTyping() {
    var active = document.activeElement;
    var typing = active && live.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName);
    return typing || !!live.querySelector("dialog[open]");
  }

  function swap(html) {
    // Keep open what the user opened (manual entry, roll-off by hand) across the update.
    var open = Array.prototype.map.call(live.querySelectorAll("details[open][id]"), function (d) { return d.id; });
    live.innerHTML = html;
    open.forEach(function (id) { var d = document.getElementById(id); if (d) d.open = true; });
    wire();
  }

  function refresh() {
    if (refreshing) { refreshing.again = true; return; }
    if (busyTyping()) { pending = true; return; }   // never wipe what someone is typing
    refreshing = { again: false };
    var url = live.dataset.part + "?lang=" + encodeURIComponent(lang) + "&t=" + Date.now();
    fetch(url, { credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) return Promise.reject(r.status);
        return r.text().then(function (html) {
          swap(html);
          live.dataset.version = r.headers.get("X-Table-Version") || "";
        });
      })
      .catch(function () {})
      .finally(function () {
        var again = refreshing.again; refreshing = null; if (again) refresh();
      });
  }

  live.addEventListener("focusout", function () {
    setTimeout(function () { if (pending && !busyTyping()) { pending = false; refresh(); } }, 0);
  });
  live.addEventListener("close", function () {
    if (pending) { pending = false; refresh(); }
  }, true);

  function connect() {
    if (!window.EventSource) { setInterval(refresh, 3000); return; }
    var source = new EventSource("/api/events");
    // Each message is {"seq", "type", "table"}; the page already shows "seq:phase" in
    // live.dataset.version (the first message on connecting is usually that: nothing to redraw).
    source.onmessage = function (event) {
      var version = "";
      try {
        var message = JSON.parse(event.data);
        version = message.seq + ":" + message.table.phase;
      } catch (e) { /* redraw anyway */ }
      if (!version || version !== live.dataset.version) refresh();
    };
    source.onerror = function () { /* EventSource reconnects by itself */ };
  }

  function post(form, extra) {
    var data = new FormData(form);
    if (extra) Object.keys(extra).forEach(function (k) { data.set(k, extra[k]); });
    return fetch(form.getAttribute("action"), {   // not form.action: a button may be named "action"
      method: "POST", body: data, credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Accept": "application/json" }
    }).then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); });
  }

  function showError(message) {
    var box = document.getElementById("bid-error") || document.getElementById("action-error");
    if (!box) { alert(message); return; }
    box.textContent = message; box.hidden = false;
  }

  function wireBidForm(form) {
    var faceInput = form.querySelector('input[name="face"]');
    var qtyInput = form.querySelector('input[name="quantity"]');
    var out = form.querySelector("output.qty");
    var preview = form.querySelector(".preview");
    function setQty(q) {
      q = Math.max(1, Math.min(99, q)); qtyInput.value = q; out.textContent = q;
      var sel = form.querySelector('.face[aria-pressed="true"] svg');
      preview.textContent = q + " × ";
      if (sel) preview.appendChild(sel.cloneNode(true));
    }
    form.querySelectorAll("button.face").forEach(function (b) {
      b.addEventListener("click", function () {
        form.querySelectorAll("button.face").forEach(function (o) { o.setAttribute("aria-pressed", "false"); });
        b.setAttribute("aria-pressed", "true");
        faceInput.value = b.dataset.face;
        setQty(parseInt(b.dataset.min, 10));
      });
    });
    form.querySelector(".minus").addEventListener("click", function () {
      var sel = form.querySelector('.face[aria-pressed="true"]');
      var min = sel ? parseInt(sel.dataset.min, 10) || 1 : 1;
      setQty(Math.max(min, parseInt(qtyInput.value, 10) - 1));
    });
    form.querySelector(".plus").addEventListener("click", function () { setQty(parseInt(qtyInput.value, 10) + 1); });
    qtyInput.addEventListener("change", function () { setQty(parseInt(qtyInput.value, 10) || 1); });
    qtyInput.hidden = true;
    setQty(parseInt(qtyInput.value, 10) || 1);
    form.addEventListener("submit", function (e) { e.preventDefault(); send(form); });
  }

  function send(form, extra) {
    // Block double taps while the move is sent; remember which buttons were off already.
    var enabled = Array.prototype.filter.call(form.querySelectorAll("button"), function (b) { return !b.disabled; });
    enabled.forEach(function (b) { b.disabled = true; });
    post(form, extra).then(function (res) {
      if (res.ok) { refresh(); return; }
      // Refused before anything changed: keep the form as it was, say why.
      enabled.forEach(function (b) { b.disabled = false; });
      showError(res.body.error || "?");
    }).catch(function () { refresh(); });
  }

  function pressed(event) {
    // The button that submitted the form, as a field (e.g. {face: "3"} or {action: "next"}).
    var field = {};
    if (event.submitter && event.submitter.name) field[event.submitter.name] = event.submitter.value;
    return field;
  }

  function wireDice() {
    var dialog = document.getElementById("correct-dialog");
    if (!dialog) return;
    var form = dialog.querySelector("form");
    document.querySelectorAll("button.diebtn").forEach(function (b) {
      b.addEventListener("click", function () {
        form.querySelector('input[name="entry"]').value = b.dataset.entry;
        dialog.showModal();
      });
    });
    dialog.querySelector(".cancel").addEventListener("click", function () { dialog.close(); });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      dialog.close();
      send(form, pressed(e));
    });
  }

  function wire() {
    live.querySelectorAll('form[data-js="bid"]').forEach(wireBidForm);
    live.querySelectorAll('form[data-js="call"]').forEach(function (f) {
      f.addEventListener("submit", function (e) {
        e.preventDefault();
        send(f, pressed(e));
      });
    });
    wireDice();
  }

  wire();
  connect();
})();
