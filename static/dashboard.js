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

  function drawChart() {
    var box = document.getElementById("pnl-chart");
    if (!box || box.dataset.drawn || typeof uPlot === "undefined") { return; }
    var series = JSON.parse(box.dataset.series || "{}");
    if (!series.at || series.at.length === 0) {
      box.innerHTML = '<p class="muted">No fills yet: the curve starts with the first copied trade.</p>';
      box.dataset.drawn = "1";
      return;
    }
    var at = series.at.slice(), total = series.total.map(Number), realized = series.realized.map(Number);
    if (at.length === 1) {  // one point draws nothing: start the line a minute earlier at 0
      at.unshift(at[0] - 60); total.unshift(0); realized.unshift(0);
    }
    var width = Math.max(260, box.clientWidth || 600);
    new uPlot({
      width: width, height: 220,
      series: [{}, {label: "Total PnL", stroke: "#1f5fd1", width: 2},
               {label: "Realized", stroke: "#2f9e44", width: 1, dash: [4, 4]}],
      axes: [{}, {size: 60}],
    }, [at, total, realized], box);
    box.dataset.drawn = "1";
  }

  window.addEventListener("load", drawChart);
})();
