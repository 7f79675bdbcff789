// The ops dashboard's drawing parts: elements, numbers, times, a rate bar and a sparkline.
// Loaded before dashboard.js, which takes them from window.SluiceDashboardParts. Every value
// from the server goes in through textContent, never as HTML.
(function () {
  'use strict';
  var HISTORY = 80; // points of send-rate history per key (2 minutes at 1.5 s)
  var SVG = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'class') node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) {
      if (c) node.appendChild(c);
    });
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    return node;
  }
  function fmt(n, digits) {
    if (n === undefined || n === null) return '—';
    if (!isFinite(n)) return '∞';
    return Number(n).toLocaleString(undefined, { maximumFractionDigits: digits === undefined ? 1 : digits });
  }
  function age(ms) {
    if (!ms) return '—';
    if (ms < 1000) return ms + ' ms';
    if (ms < 120000) return (ms / 1000).toFixed(1) + ' s';
    if (ms < 7200000) return Math.round(ms / 60000) + ' min';
    return (ms / 3600000).toFixed(1) + ' h';
  }
  function until(ms, now) {
    var left = ms - now;
    return new Date(ms).toLocaleTimeString() + (left > 0 ? ' (in ' + age(left) + ')' : '');
  }
  function replace(id, node) {
    var host = document.getElementById(id);
    host.replaceChildren(node);
  }

  /** Bar: configured limit (grey), effective limit (green), send rate (blue), on one scale. */
  function rateBar(k, scale) {
    var w = 260,
      h = 16,
      s = svg('svg', { width: w, height: h, 'data-testid': 'rate-bar', role: 'img' });
    var x = function (v) {
      return Math.max(0, Math.min(w, (v / scale) * w));
    };
    s.appendChild(svg('rect', { x: 0, y: 0, width: w, height: h, fill: '#f3f4f6' }));
    if (k.configuredRate !== undefined)
      s.appendChild(svg('rect', { x: 0, y: 2, width: x(k.configuredRate), height: h - 4, fill: 'var(--conf)' }));
    if (k.effectiveRate !== undefined)
      s.appendChild(svg('rect', { x: 0, y: 4, width: x(k.effectiveRate), height: h - 8, fill: 'var(--eff)' }));
    s.appendChild(svg('rect', { x: 0, y: 6, width: x(k.sendRate), height: h - 12, fill: 'var(--send)' }));
    if (k.effectiveRate !== undefined)
      s.appendChild(
        svg('line', {
          x1: x(k.effectiveRate),
          x2: x(k.effectiveRate),
          y1: 0,
          y2: h,
          stroke: '#047857',
          'stroke-width': 2,
        }),
      );
    var title = svg('title', {});
    title.textContent =
      'send ' +
      fmt(k.sendRate) +
      '/s of ' +
      fmt(k.effectiveRate) +
      '/s effective, ' +
      fmt(k.configuredRate) +
      '/s configured';
    s.appendChild(title);
    return s;
  }

  /** Sparkline of the send rate, with the effective limit as a dashed line. */
  function sparkline(points, limit) {
    var w = 160,
      h = 28,
      s = svg('svg', { width: w, height: h, 'data-testid': 'sparkline' });
    var max = Math.max(limit || 0, Math.max.apply(null, points.concat([1]))) * 1.1;
    s.appendChild(svg('rect', { x: 0, y: 0, width: w, height: h, fill: '#f9fafb' }));
    if (limit) {
      var ly = h - (limit / max) * h;
      s.appendChild(svg('line', { x1: 0, x2: w, y1: ly, y2: ly, stroke: 'var(--eff)', 'stroke-dasharray': '3 2' }));
    }
    if (points.length > 1) {
      var step = w / (HISTORY - 1),
        off = w - (points.length - 1) * step;
      var d = points
        .map(function (v, i) {
          return (i ? 'L' : 'M') + (off + i * step).toFixed(1) + ' ' + (h - (v / max) * h).toFixed(1);
        })
        .join(' ');
      s.appendChild(
        svg('path', {
          d: d + ' L' + w + ' ' + h + ' L' + off.toFixed(1) + ' ' + h + ' Z',
          fill: 'var(--send)',
          opacity: 0.15,
        }),
      );
      s.appendChild(svg('path', { d: d, fill: 'none', stroke: 'var(--send)', 'stroke-width': 1.5 }));
    }
    return s;
  }

  // A campaign's launch decision in a few words; its reason on hover.
  function launchText(l) {
    if (!l) return 'not launched';
    var text = l.kind + (l.waves ? ' ×' + l.waves : '');
    if (l.approval === 'required') text += ' (awaiting approval)';
    else if (l.approvedBy) text += ' (approved by ' + l.approvedBy + ')';
    if (l.untilMs) text += ' until ' + new Date(l.untilMs).toISOString().slice(11, 19) + 'Z';
    if (l.stopped.length) text += ', stopped: ' + l.stopped.join(' ');
    return text;
  }

  function launchTitle(l) {
    return l ? (l.rule ? l.rule + ': ' : '') + l.reason : 'sluice campaigns launch <id> <forecast.json>';
  }

  // Who is there, and a banner while any provider sends to the sandbox (mail that never leaves).
  function fleetView(f) {
    var roles = ['scheduler', 'worker', 'api', 'admin'].map(function (r) {
      return r + ' ' + f.alive[r];
    });
    var releases = {};
    f.processes.forEach(function (p) {
      releases['Sluice ' + p.version + ', schema ' + p.schema] = true;
    });
    var parts = [
      el('div', {
        'data-testid': 'fleet-processes',
        text: f.processes.length
          ? roles.join(' · ') + ' — ' + Object.keys(releases).join('; ')
          : 'no process beats under this prefix: no fleet runs here',
      }),
    ];
    if (f.sandbox.length)
      parts.push(
        el('div', {
          class: 'banner',
          'data-testid': 'sandbox-banner',
          text: 'SANDBOX: ' + f.sandbox.join(', ') + ' send to the local sandbox ESP; their mail never leaves',
        }),
      );
    if (f.processes.length && !f.alive.scheduler)
      parts.push(el('div', { class: 'banner', text: 'no scheduler runs: nothing is admitted' }));
    if (f.unscheduled)
      parts.push(
        el('div', { text: f.unscheduled.count + ' messages accepted while no scheduler ran, waiting for one' }),
      );
    return el('div', {}, parts);
  }

  window.SluiceDashboardParts = {
    fleetView: fleetView,
    launchText: launchText,
    launchTitle: launchTitle,
    HISTORY: HISTORY,
    el: el,
    svg: svg,
    fmt: fmt,
    age: age,
    until: until,
    replace: replace,
    rateBar: rateBar,
    sparkline: sparkline,
  };
})();
