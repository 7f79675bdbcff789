// The ops dashboard: reads /api/status every 1.5 s and draws it. No build step, no
// dependencies. Every value from the server goes in through textContent, never as HTML.
(function () {
  'use strict';
  var REFRESH_MS = 1500;
  var P = window.SluiceDashboardParts; // dashboard-parts.js
  var HISTORY = P.HISTORY;
  var el = P.el,
    fmt = P.fmt,
    age = P.age,
    until = P.until,
    replace = P.replace,
    rateBar = P.rateBar,
    sparkline = P.sparkline,
    svg = P.svg,
    launchText = P.launchText,
    launchTitle = P.launchTitle;
  var history = {}; // "scope/name" -> [sendRate, ...]
  var lastOk = 0;

  function drawOutcomes(o) {
    var tiles = [
      ['recipients', 'recipients', 0],
      ['attempts', 'attempts', 0],
      ['accepted', 'accepted', 0],
      ['deferredRecipients', 'recipients deferred', 0],
      ['deferred', 'deferred attempts', 0],
      ['rejected', 'rejected', 0],
      ['retries', 'retries', 0],
      ['attemptsPerRecipient', 'attempts / recipient', 2],
    ];
    replace(
      'outcomes',
      el(
        'div',
        { class: 'tiles' },
        tiles.map(function (t) {
          return el('div', { class: 'tile', 'data-testid': 'outcome-' + t[0] }, [
            el('div', { class: 'v', 'data-testid': 'outcome-' + t[0] + '-value', text: fmt(o[t[0]], t[2]) }),
            el('div', { class: 'k', text: t[1] }),
          ]);
        }),
      ),
    );
  }

  function drawKeys(keys, now) {
    var order = ['provider', 'receiver', 'pool', 'campaign', 'tenant'];
    var rows = [];
    order.forEach(function (scope) {
      var list = keys.filter(function (k) {
        return k.scope === scope;
      });
      if (!list.length) return;
      var scale = Math.max.apply(
        null,
        list
          .map(function (k) {
            return Math.max(k.configuredRate || 0, k.effectiveRate || 0, k.sendRate);
          })
          .concat([1]),
      );
      rows.push(el('tr', {}, [el('th', { colspan: 8, text: scope + 's' })]));
      list.forEach(function (k) {
        var id = scope + '/' + k.name;
        var h = history[id] || (history[id] = []);
        h.push(k.sendRate);
        if (h.length > HISTORY) h.shift();
        var state = k.override
          ? el('span', {
              class: 'pill override',
              'data-testid': 'override',
              text:
                k.override.kind +
                (k.override.rate !== undefined ? ' ' + k.override.rate + '/s' : '') +
                ' until ' +
                until(k.override.untilMs, now),
            })
          : k.factor < 1
            ? el('span', { class: 'pill half-open', text: 'lowered ×' + fmt(k.factor, 2) })
            : null;
        rows.push(
          el('tr', { 'data-testid': 'key-' + scope + '-' + k.name, 'data-scope': scope, 'data-name': k.name }, [
            el('td', { text: k.name }),
            el('td', {}, [rateBar(k, scale)]),
            el('td', { class: 'num', 'data-testid': 'send-rate', text: fmt(k.sendRate) + '/s' }),
            el('td', {
              class: 'num',
              'data-testid': 'effective-rate',
              text: k.effectiveRate === undefined ? 'no limit' : fmt(k.effectiveRate) + '/s',
            }),
            el('td', {
              class: 'num',
              'data-testid': 'configured-rate',
              text: k.configuredRate === undefined ? '—' : fmt(k.configuredRate) + '/s',
            }),
            el('td', {
              class: 'num',
              'data-testid': 'tokens',
              title: 'sends the bucket takes at once now',
              text: k.tokens === undefined ? '—' : fmt(k.tokens, 0) + ' tokens',
            }),
            el('td', {}, [sparkline(h, k.effectiveRate)]),
            el('td', {}, [state]),
          ]),
        );
      });
    });
    replace(
      'keys',
      el('table', {}, [
        el('thead', {}, [
          el(
            'tr',
            {},
            [
              'key',
              'send / effective / configured',
              'send',
              'effective',
              'configured',
              'tokens',
              'send rate, 2 min',
              'state',
            ].map(function (t, i) {
              return el('th', { class: i >= 2 && i <= 5 ? 'num' : '', text: t });
            }),
          ),
        ]),
        el('tbody', {}, rows),
      ]),
    );
  }

  function drawCampaigns(campaigns) {
    if (!campaigns.length) return replace('campaigns', el('div', { class: 'empty', text: 'no campaigns' }));
    replace(
      'campaigns',
      el('table', {}, [
        el('thead', {}, [
          el(
            'tr',
            {},
            ['campaign', 'state', 'launch', 'sent', 'pending', 'progress', ''].map(function (t, i) {
              return el('th', { class: i === 3 || i === 4 ? 'num' : '', text: t });
            }),
          ),
        ]),
        el(
          'tbody',
          {},
          campaigns.map(function (c) {
            var accepted = c.counts.accepted || 0,
              sent = c.counts.sent || 0,
              // May have been delivered (ambiguous, no answer): neither sent nor refused.
              unconfirmed = c.counts.unconfirmed || 0,
              final = accepted - (c.counts.pending || 0);
            var bar = svg('svg', { width: 120, height: 10 });
            bar.appendChild(svg('rect', { x: 0, y: 0, width: 120, height: 10, fill: '#f3f4f6' }));
            if (accepted) {
              bar.appendChild(
                svg('rect', { x: 0, y: 0, width: (120 * final) / accepted, height: 10, fill: '#fca5a5' }),
              );
              bar.appendChild(
                svg('rect', {
                  x: 0,
                  y: 0,
                  width: (120 * (sent + unconfirmed)) / accepted,
                  height: 10,
                  fill: '#fcd34d',
                }),
              );
              bar.appendChild(
                svg('rect', { x: 0, y: 0, width: (120 * sent) / accepted, height: 10, fill: 'var(--eff)' }),
              );
            }
            var paused = c.state === 'paused';
            var button = el('button', {
              type: 'button',
              'data-testid': 'campaign-' + c.id + '-' + (paused ? 'resume' : 'pause'),
              text: paused ? 'Resume' : 'Pause',
            });
            button.addEventListener('click', function () {
              act(c.id, paused ? 'resume' : 'pause', button);
            });
            return el('tr', { 'data-testid': 'campaign-' + c.id, 'data-state': c.state }, [
              el('td', { text: c.name && c.name !== c.id ? c.name + ' (' + c.id + ')' : c.id }),
              el('td', {}, [
                el('span', { class: 'pill ' + c.state, 'data-testid': 'campaign-' + c.id + '-state', text: c.state }),
              ]),
              el('td', { 'data-testid': 'campaign-' + c.id + '-launch', title: launchTitle(c.launch) }, [
                el('span', { text: launchText(c.launch) }),
              ]),
              el('td', { class: 'num', 'data-testid': 'campaign-' + c.id + '-sent', text: String(sent) }),
              el('td', {
                class: 'num',
                'data-testid': 'campaign-' + c.id + '-pending',
                text: String(c.counts.pending || 0),
              }),
              el('td', {}, [bar]),
              el('td', {}, c.state === 'cancelled' || c.state === 'done' ? [] : [button]),
            ]);
          }),
        ),
      ]),
    );
  }

  function drawQueues(queues) {
    var max = Math.max.apply(
      null,
      queues
        .map(function (q) {
          return q.waiting + q.delayed + q.active;
        })
        .concat([1]),
    );
    replace(
      'queues',
      el('table', {}, [
        el('thead', {}, [
          el(
            'tr',
            {},
            ['queue', 'waiting', 'delayed', 'active', 'oldest', ''].map(function (t, i) {
              return el('th', { class: i && i < 5 ? 'num' : '', text: t });
            }),
          ),
        ]),
        el(
          'tbody',
          {},
          queues.map(function (q) {
            var bar = svg('svg', { width: 100, height: 10 });
            var x = 0;
            [
              [q.active, 'var(--send)'],
              [q.waiting, 'var(--warn)'],
              [q.delayed, 'var(--conf)'],
            ].forEach(function (p) {
              var w = (100 * p[0]) / max;
              bar.appendChild(svg('rect', { x: x, y: 0, width: w, height: 10, fill: p[1] }));
              x += w;
            });
            return el('tr', { 'data-testid': 'queue-' + q.queue }, [
              el('td', { text: q.queue }),
              el('td', { class: 'num', 'data-testid': 'waiting', text: fmt(q.waiting, 0) }),
              el('td', { class: 'num', 'data-testid': 'delayed', text: fmt(q.delayed, 0) }),
              el('td', { class: 'num', 'data-testid': 'active', text: fmt(q.active, 0) }),
              el('td', { class: 'num', 'data-testid': 'oldest', text: age(q.oldestAgeMs) }),
              el('td', {}, [bar]),
            ]);
          }),
        ),
      ]),
    );
  }

  function drawLatency(latency) {
    var classes = ['critical', 'high', 'normal', 'low'];
    var max = Math.max.apply(
      null,
      classes
        .map(function (c) {
          return latency[c] ? latency[c].p95 : 0;
        })
        .concat([1]),
    );
    replace(
      'latency',
      el('table', {}, [
        el('thead', {}, [
          el(
            'tr',
            {},
            ['class', 'p50', 'p95', 'samples', ''].map(function (t, i) {
              return el('th', { class: i && i < 4 ? 'num' : '', text: t });
            }),
          ),
        ]),
        el(
          'tbody',
          {},
          classes.map(function (c) {
            var l = latency[c];
            var bar = svg('svg', { width: 160, height: 12 });
            if (l) {
              bar.appendChild(
                svg('rect', { x: 0, y: 0, width: (160 * l.p95) / max, height: 12, fill: 'var(--warn)', opacity: 0.5 }),
              );
              bar.appendChild(svg('rect', { x: 0, y: 0, width: (160 * l.p50) / max, height: 12, fill: 'var(--send)' }));
            }
            return el('tr', { 'data-testid': 'latency-' + c }, [
              el('td', { text: c }),
              el('td', { class: 'num', 'data-testid': 'p50', text: l ? age(l.p50) : '—' }),
              el('td', { class: 'num', 'data-testid': 'p95', text: l ? age(l.p95) : '—' }),
              el('td', { class: 'num', text: l ? String(l.samples) : '0' }),
              el('td', {}, [bar]),
            ]);
          }),
        ),
      ]),
    );
  }

  function drawControls(s) {
    var rows = [];
    s.circuits.forEach(function (c) {
      rows.push(
        el('tr', { 'data-testid': 'circuit-' + c.name }, [
          el('td', { text: 'circuit' }),
          el('td', { text: c.name }),
          el('td', {}, [el('span', { class: 'pill ' + c.state, text: c.state })]),
          el('td', { text: c.state === 'open' ? 'until ' + until(c.untilMs, s.at) : 'probing' }),
          el('td', { text: '' }),
        ]),
      );
    });
    s.overrides.forEach(function (o) {
      rows.push(
        el('tr', { 'data-testid': 'override-' + o.scope + '-' + o.name }, [
          el('td', { text: 'override' }),
          el('td', { text: o.scope + ' ' + o.name }),
          el('td', {}, [
            el('span', { class: 'pill override', text: o.kind + (o.rate !== undefined ? ' ' + o.rate + '/s' : '') }),
          ]),
          el('td', { text: 'until ' + until(o.untilMs, s.at) }),
          el('td', { text: o.actor + ': ' + o.reason }),
        ]),
      );
    });
    if (!rows.length)
      return replace(
        'controls',
        el('div', {
          class: 'empty',
          'data-testid': 'controls-empty',
          text: 'no open circuit, no override: everything runs at its configured rate and the governor\u2019s factors',
        }),
      );
    replace('controls', el('table', {}, [el('tbody', {}, rows)]));
  }

  function act(id, action, button) {
    button.disabled = true;
    fetch('/api/campaigns/' + encodeURIComponent(id) + '/' + action, { method: 'POST', credentials: 'same-origin' })
      .then(function (r) {
        if (!r.ok) throw new Error(action + ' failed: HTTP ' + r.status);
      })
      .then(refresh)
      .catch(function (err) {
        alert(err.message);
        button.disabled = false;
      });
  }

  function refresh() {
    return fetch('/api/status', { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.json();
      })
      .then(function (s) {
        replace('fleet', P.fleetView(s.fleet));
        drawOutcomes(s.outcomes);
        drawKeys(s.keys, s.at);
        drawCampaigns(s.campaigns);
        drawQueues(s.queues);
        drawLatency(s.latency);
        drawControls(s);
        lastOk = Date.now();
        var status = document.getElementById('status');
        status.className = 'status';
        status.textContent = 'updated ' + new Date(s.at).toLocaleTimeString();
        status.setAttribute('data-at', String(s.at));
      })
      .catch(function (err) {
        var status = document.getElementById('status');
        status.className = 'status stale';
        status.textContent =
          'not updated since ' + (lastOk ? new Date(lastOk).toLocaleTimeString() : 'start') + ': ' + err.message;
      });
  }

  function loop() {
    refresh().then(function () {
      setTimeout(loop, REFRESH_MS);
    });
  }
  loop();
})();
