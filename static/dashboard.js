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
      chartNote(box, box.dataset.empty ||
        "No fills yet: the curve starts with the first copied trade.");
      return;
    }
    if (typeof uPlot === "undefined") { return; }
    var at = series.at.slice(), total = series.total.map(Number);
    var realized = series.realized ? series.realized.map(Number) : null;
    // A PnL within a minute (one fill just now) starts a minute earlier at 0; a price
    // (data-kind="price") had no known value before its first point, so none is made up.
    if (at[at.length - 1] - at[0] < 60 && box.dataset.kind !== "price") {
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
      if (box.dataset.kind === "price") { return [0, 1]; }  // a price is a probability
      return min === max ? [min - 1, max + 1] : uPlot.rangeNum(min, max, 0.1, true);
    };
    fitted(box, new uPlot({width: width, height: 220, series: lines, axes: [{}, {size: 60}],
                           scales: {x: {range: timeRange}, y: {range: yRange}}}, data, box),
           220);
  }

  // Several traders' curves on one time axis: data-series {at: [epoch s], lines: [{label,
  // values}]} (the compare page).
  var PALETTE = ["#1f5fd1", "#2f9e44", "#d9480f", "#862e9c", "#0b7285"];
  function drawCompare() {
    var box = document.getElementById("compare-chart");
    if (!box || box.dataset.drawn) { return; }
    var series = JSON.parse(box.dataset.series || "{}");
    if (!series.at || series.at.length === 0) { chartNote(box, box.dataset.empty); return; }
    if (typeof uPlot === "undefined") { return; }
    var lines = [{}], data = [series.at.slice()];
    series.lines.forEach(function (line, index) {
      lines.push({label: line.label, stroke: PALETTE[index % PALETTE.length], width: 2});
      data.push(line.values.map(Number));
    });
    var width = Math.max(240, box.clientWidth || 600);
    fitted(box, new uPlot({width: width, height: 240, series: lines, axes: [{}, {size: 60}],
                           scales: {x: {range: timeRange}}}, data, box), 240);
  }

  // A time axis over points within a minute (one copy just now) gets a minute each side,
  // not the 1,000 days uPlot gives a single moment; a zoom inside the data is left alone.
  function timeRange(u, min, max) {
    var at = u.data[0], first = at[0], last = at[at.length - 1];
    if (last - first < 60 && min <= first && max >= last) { return [first - 60, last + 60]; }
    return [min, max];
  }

  // A chart box with nothing to draw says so in words.
  function chartNote(box, text) {
    var note = document.createElement("p");
    note.className = "muted chart-empty";
    note.textContent = text;
    box.replaceChildren(note);
    box.dataset.drawn = "1";
  }

  // The chart follows its box (a phone turned, a window narrowed): never wider than the page.
  function fitted(box, plot, height) {
    box.dataset.drawn = "1";
    // What x covers, once uPlot has set its scales (in a microtask queued before this one).
    Promise.resolve().then(function () {
      box.dataset.xSpan = String(plot.scales.x.max - plot.scales.x.min);
    });
    window.addEventListener("resize", function () {
      plot.setSize({width: Math.max(240, box.clientWidth), height: height});
    });
  }

  // The config page's execution quality: each stage's delay per filled copy over time, and
  // the slippage histogram (data-quality {at, stages: {name: [ms|null]}, buckets, counts}).
  var STAGE_COLOURS = {decision: "#1f5fd1", placement: "#2f9e44", ack: "#e8590c",
                       settlement: "#7048e8", taker_delay: "#c92a2a"};
  function drawQuality() {
    var latency = document.getElementById("latency-chart");
    var slippage = document.getElementById("slippage-chart");
    if (!latency || latency.dataset.drawn) { return; }
    // A folded section has no width yet: its charts are drawn when it opens.
    var folded = latency.closest("details:not([open])");
    if (folded) { return; }
    var data = JSON.parse(latency.dataset.quality || "{}");
    if (!data.at || data.at.length === 0) {
      chartNote(latency, "No filled copy in the window: no stage delays to chart yet.");
      chartNote(slippage, "No filled copy in the window: no slippage to chart yet.");
      return;
    }
    if (typeof uPlot === "undefined") { return; }
    var width = Math.max(240, latency.clientWidth || 600);
    var lines = [{}], columns = [data.at];
    Object.keys(data.stages).forEach(function (name) {
      lines.push({label: name.replace("_", " ") + " (ms)", stroke: STAGE_COLOURS[name],
                  width: 2, points: {show: true}, spanGaps: true});
      columns.push(data.stages[name]);
    });
    fitted(latency, new uPlot({width: width, height: 220, series: lines,
                               scales: {x: {range: timeRange}},
                               axes: [{}, {size: 60}]}, columns, latency), 220);
    var bars = uPlot.paths && uPlot.paths.bars ? uPlot.paths.bars({size: [0.8]}) : undefined;
    var step = data.step || 25, last = data.buckets[data.buckets.length - 1];
    fitted(slippage, new uPlot({
      width: width, height: 200,
      scales: {x: {time: false, range: function () { return [data.buckets[0] - step / 2,
                                                             last + step / 2]; }},
               y: {range: function (u, min, max) { return [0, Math.max(1, max) + 1]; }}},
      series: [{label: "from bps"}, {label: "copies", fill: "#1f5fd133", stroke: "#1f5fd1",
                                      paths: bars, points: {show: !bars}}],
      axes: [{}, {size: 40}]}, [data.buckets, data.counts], slippage), 200);
  }

  // Moments are sent in UTC; show them in the reader's time zone, the zone named.
  function localTimes(root) {
    var found = (root || document).querySelectorAll("time.local:not([data-local])");
    Array.prototype.forEach.call(found, function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment.getTime())) { return; }
      // In a table of recent rows ([data-short-times]) the year and zone go: the title
      // keeps the full moment, and the columns their width.
      var short = el.closest("[data-short-times]") !== null;
      el.textContent = moment.toLocaleString(undefined, short ? {
        month: "short", day: "numeric", hour: "2-digit", minute: "2-digit"} : {
        year: "numeric", month: "short", day: "numeric", hour: "2-digit",
        minute: "2-digit", timeZoneName: "short"});
      el.title = el.getAttribute("datetime");
      el.dataset.local = "1";
    });
    // Short times name their zone once, in their column's heading.
    var zone = new Intl.DateTimeFormat(undefined, {timeZoneName: "short"}).formatToParts(
      new Date()).filter(function (part) { return part.type === "timeZoneName"; });
    var headings = (root || document).querySelectorAll("[data-zone-name]");
    Array.prototype.forEach.call(headings, function (el) {
      el.textContent = zone.length ? "(" + zone[0].value + ")" : "";
    });
  }

  // Sizing: only the chosen mode's field shows; switching modes clears the other's, so a
  // multiplier left in the form is never saved with a fixed amount (issue 44).
  function sizingFields(root) {
    var selects = root.querySelectorAll("select[name=sizing_mode]");
    Array.prototype.forEach.call(selects, function (select) {
      var form = select.form;
      if (!form || select.dataset.sizingBound) { return; }
      select.dataset.sizingBound = "1";
      var show = function (clear) {
        var fixed = select.value === "fixed_usdc";
        var fields = form.querySelectorAll("[data-sizing-field]");
        Array.prototype.forEach.call(fields, function (el) {
          var mine = (el.getAttribute("data-sizing-field") === "fixed_usdc") === fixed;
          el.hidden = !mine;
          var input = el.querySelector("input");
          if (!mine && clear && input) { input.value = ""; }
        });
      };
      select.addEventListener("change", function () { show(true); });
      show(false);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    sizingFields(document);
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    localTimes(event.target);
    sizingFields(event.target);
  });
  window.addEventListener("load", drawChart);
  window.addEventListener("load", drawCompare);
  window.addEventListener("load", drawQuality);
  // "toggle" does not bubble: caught on its way down to the details that opened.
  document.addEventListener("toggle", function (event) {
    if (event.target.open && event.target.querySelector("#latency-chart")) { drawQuality(); }
  }, true);
})();
