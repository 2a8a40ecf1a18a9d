// The dashboard's glue: CSRF and error-target headers on every htmx request, copy buttons,
// and the PnL chart (uPlot, served from its npm package; amounts are plotted, never stored).
(function () {
  "use strict";

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  document.addEventListener("htmx:configRequest", function (event) {
    event.detail.headers["X-CSRF-Token"] = csrfToken();
    var source = event.detail.elt;
    var holder = source && source.closest ? source.closest("[data-error-target]") : null;
    event.detail.headers["X-Error-Target"] = holder
      ? holder.getAttribute("data-error-target") : "#flash";
  });

  // A new request clears the message slot of the form that sends it.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var source = event.detail.elt;
    var holder = source && source.closest ? source.closest("[data-error-target]") : null;
    if (!holder || holder.hasAttribute("hx-trigger")) { return; }
    var slot = document.querySelector(holder.getAttribute("data-error-target"));
    if (slot && slot !== holder) { slot.innerHTML = ""; }
  });

  function copyText(text, button) {
    var done = function () {
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = "Copy"; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text); done(); });
    } else {
      fallbackCopy(text);
      done();
    }
  }

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* the text stays selectable */ }
    document.body.removeChild(area);
  }

  document.addEventListener("click", function (event) {
    var copy = event.target.closest("[data-copy]");
    if (copy) {
      var source = document.querySelector(copy.getAttribute("data-copy"));
      if (source) { copyText(source.textContent.trim(), copy); }
      return;
    }
    var clear = event.target.closest("[data-clear]");
    if (clear) {
      var target = document.querySelector(clear.getAttribute("data-clear"));
      if (target) { target.innerHTML = ""; }
    }
  });

  // A chart from its element's data: data-series {at: [epoch s], total: [...], realized?},
  // data-label names the main line, data-empty is said in words when there is nothing to draw.
  function drawChart() {
    var box = document.getElementById("pnl-chart");
    if (!box || box.dataset.drawn) { return; }
    var series = JSON.parse(box.dataset.series || "{}");
    if (!series.at || series.at.length === 0) {
      var note = document.createElement("p");
      note.className = "muted chart-empty";
      note.textContent = box.dataset.empty ||
        "No fills yet: the curve starts with the first copied trade.";
      box.replaceChildren(note);
      box.dataset.drawn = "1";
      return;
    }
    if (typeof uPlot === "undefined") { return; }
    var at = series.at.slice(), total = series.total.map(Number);
    var realized = series.realized ? series.realized.map(Number) : null;
    // Points within a minute (one fill just now) draw nothing on a time axis of no width:
    // start the line a minute earlier at 0.
    if (at[at.length - 1] - at[0] < 60) {
      at.unshift(at[0] - 60); total.unshift(0); if (realized) { realized.unshift(0); }
    }
    var lines = [{}, {label: box.dataset.label || "Total PnL", stroke: "#1f5fd1", width: 2}];
    var data = [at, total];
    if (realized) {
      lines.push({label: "Realized", stroke: "#2f9e44", width: 1, dash: [4, 4]});
      data.push(realized);
    }
    var width = Math.max(240, box.clientWidth || 600);
    // A flat line (all zero) gets a small range around it, not uPlot's empty 0-100.
    var yRange = function (u, min, max) {
      return min === max ? [min - 1, max + 1] : uPlot.rangeNum(min, max, 0.1, true);
    };
    var plot = new uPlot({width: width, height: 220, series: lines, axes: [{}, {size: 60}],
                          scales: {y: {range: yRange}}}, data, box);
    box.dataset.drawn = "1";
    // The chart follows its box (a phone turned, a window narrowed): never wider than the page.
    window.addEventListener("resize", function () {
      plot.setSize({width: Math.max(240, box.clientWidth), height: 220});
    });
  }

  // Moments are sent in UTC; show them in the reader's time zone, the zone named.
  function localTimes(root) {
    var found = (root || document).querySelectorAll("time.local:not([data-local])");
    Array.prototype.forEach.call(found, function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment.getTime())) { return; }
      el.textContent = moment.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "numeric", hour: "2-digit",
        minute: "2-digit", timeZoneName: "short"});
      el.title = el.getAttribute("datetime");
      el.dataset.local = "1";
    });
  }

  document.addEventListener("DOMContentLoaded", function () { localTimes(document); });
  document.addEventListener("htmx:afterSwap", function (event) { localTimes(event.target); });
  window.addEventListener("load", drawChart);
})();
