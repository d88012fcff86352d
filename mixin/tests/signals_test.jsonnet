// The promtool unit tests of the signal pack, examples/signals_test.yml,
// written by mixin/generate.jsonnet against examples/signals.yml.
//
// Every signal gets synthetic day rows, served at 01:00 of the day after
// their interval (minute 60 + 1440 k of the test), by two members of one
// exporter, and four cases:
//
// - it fires at the evaluation that first sees its crossing row, once
//   (one alert for both members), resolves lookbackMinutes later, stays
//   silent on the next row still beyond the level, and fires again on a
//   later crossing;
// - a replay of rows that never cross (values beyond the level all
//   along, or short of it; a series against too short a history) is
//   silent;
// - a crossing row whose interval ended longer ago than the provider
//   calls healthy (a stalled series catching up) is silent, and so is a
//   value revised across the level without a new row.
//
// The rows and what is expected are worked out here from the signal's
// kind and level; the expressions under test come from the mixin.
local list = import '../alerts/signal-list.libsonnet';
local mixin = (import '../mixin.libsonnet') + {
  _config+:: { signals+: { categories: { [c]: true for c in list.categories } } },
};
local cfg = mixin._config;
local s = cfg.signals;
local lv = s.levels;
local L = s.lookbackMinutes;
// The evaluation interval of the tests: promtool evaluates every rule at
// every step, weeks of them here, at a cost that grows with the series of
// the group. Rows come on its steps (01:00), and an alert of the pack
// fires at the step that sees its row and no longer at the next.
local E = 60;

local num(x) = if x == 0 then '0' else '%g' % x;

// The minute row k is served from, and its time (the start of its
// interval, a day before it is served).
local served(k) = if k == 0 then 0 else 1440 * k + 60;
local rowTime(k) = 86400 * (k - 1);

// A level in force, as the rule reads it.
local level(sig) = (if std.get(sig, 'negate', false) then -1 else 1) * lv[sig.level];

// notation writes segments [{v, from}] (minutes, ascending) up to minute
// end as promtool's expanding notation, every value at full precision
// (std.toString: std.format is slow on this many).
local notation(segs, end) = std.join(' ', [
  local n = (if i + 1 < std.length(segs) then segs[i + 1].from else end + 1) - segs[i].from;
  std.toString(segs[i].v) + (if n == 1 then '' else 'x' + std.toString(n - 1))
  for i in std.range(0, std.length(segs) - 1)
]);

// rowSegs are the segments of values, one a row from row 0.
local rowSegs(values) = [{ v: values[k], from: served(k) } for k in std.range(0, std.length(values) - 1)];
local timeSegs(n) = [{ v: rowTime(k), from: served(k) } for k in std.range(0, n - 1)];

// at is the value served at minute m by segments.
local at(segs, m) = std.foldl(function(acc, seg) if seg.from <= m then seg.v else acc, segs, null);

// points are the values a subquery [range:step] ending at minute end
// reads: those at the multiples of step in the range.
local points(segs, end, rangeMinutes, step) = [
  at(segs, step * i)
  for i in std.range(0, std.floor(end / step))
  if step * i >= end - rangeMinutes
];
local mean(xs) = std.foldl(function(a, x) a + x, xs, 0) / std.length(xs);
local stddev(xs) =
  local m = mean(xs);
  std.sqrt(mean([(x - m) * (x - m) for x in xs]));

// valueAt is what the rule's expression is worth at minute m, the row
// crossing then.
local valueAt(sig, segs, m) =
  if sig.kind == 'level' then at(segs, m)
  else if sig.kind == 'change' then (at(segs, m) - at(segs, m - L)) / at(segs, m - L)
  else if sig.kind == 'ratio' then
    local days = std.endsWith(lv[sig.over], 'd');
    local n = std.parseInt(std.rstripChars(lv[sig.over], 'dh'));
    at(segs, m) / mean(points(segs, m - L, n * (if days then 1440 else 60), if days then 1440 else 60))
  else
    local h = points(segs, m - L, s.historyDays * 1440, 1440);
    (at(segs, m) - mean(h)) / stddev(h);

// humanize is Prometheus' humanize for the values a description meets.
local humanizePercentage(v) = '%.4g' % (100 * v) + '%';

// render is a description as Prometheus renders it for labels and value.
local render(tmpl, labels, value) =
  local withs(t) = std.foldl(
    function(acc, name)
      local parts = std.split(acc, '{{ with $labels.%s }}' % name);
      if std.length(parts) == 1 then acc
      else parts[0] + std.join('', [
        local body = std.split(p, '{{ end }}');
        (if std.objectHas(labels, name) then std.strReplace(body[0], '{{ . }}', labels[name]) else '')
        + std.join('{{ end }}', body[1:])
        for p in parts[1:]
      ]),
    ['token', 'symbol', 'exchange', 'miner', 'chain'],
    t
  );
  local labelled = std.foldl(
    function(acc, name) std.strReplace(acc, '{{ $labels.%s }}' % name, std.get(labels, name, '')),
    ['asset', 'window', 'exchange', 'token', 'symbol', 'miner', 'kind', 'chain'],
    withs(tmpl)
  );
  std.foldl(
    function(acc, f) std.strReplace(acc, f[0], f[1]),
    [
      ['{{ $value | printf "%.1f" }}', '%.1f' % value],
      ['{{ $value | printf "%.2f" }}', '%.2f' % value],
      ['{{ $value | printf "%.3f" }}', '%.3f' % value],
      ['{{ $value | humanizePercentage }}', humanizePercentage(value)],
    ],
    labelled
  );

// A signal's series: its labels (asset and the parameters the test
// gives), the value's and the row time's selectors, for member 1 or 2.
local testParams = { exchange: 'binance', miner: 'f2pool' };
local seriesLabels(sig, asset) = { asset: asset, window: 'day' } + {
  [p]: testParams[p]
  for p in sig.params
  if std.objectHas(testParams, p)
} + (if std.objectHas(sig, 'matchers') then { kind: 'mint' } else {});
local labelText(labels) = std.join(', ', [k + '="' + labels[k] + '"' for k in std.objectFields(labels)]);
local endpoint(sig, asset) = std.strReplace(sig.endpoint, '[^/]+', asset);

local member(i) = { job: 'onchain_exporter', instance: 'exporter-%d:9799' % i };

// series are the input series of one signal's rows on `members` members.
local series(sig, asset, values, times, end, members=1) =
  local labels = seriesLabels(sig, asset);
  local tsLabels = { [k]: labels[k] for k in std.objectFields(labels) if k != 'kind' } + { api: 'data', endpoint: endpoint(sig, asset) };
  std.flattenArrays([
    [
      {
        series: sig.metric + '{' + labelText(member(i) + labels) + '}',
        values: notation(values, end),
      },
      {
        series: 'onchain_data_timestamp_seconds{' + labelText(member(i) + tsLabels) + '}',
        values: notation(times, end),
      },
    ]
    for i in std.range(1, members)
  ]);

// alert is the alert expected for a signal's series worth value.
local alert(sig, asset, value) =
  local labels = seriesLabels(sig, asset);
  {
    exp_labels: { severity: 'info', category: 'market', job: 'onchain_exporter' } + labels,
    exp_annotations: {
      summary: sig.summary,
      description: render(sig.description % { level: num(level(sig)), days: s.historyDays }, labels, value) + ' ' + list.notAdvice,
      runbook_url: s.runbookURLPattern % std.asciiLower(sig.alert),
    },
  };

local silent(sig, minutes) = [
  { eval_time: std.toString(m) + 'm', alertname: sig.alert, exp_alerts: [] }
  for m in minutes
];
local firing(sig, m, alerts) = { eval_time: std.toString(m) + 'm', alertname: sig.alert, exp_alerts: alerts };

// The rows of each kind: the history before the first crossing (rows
// 0 .. c-1), then `crossing` from row c, crossing again at row c+again
// after a row back at (not beyond) the level, so that a pair of signals
// on one series in opposite directions (SOPR) never sees the other's
// crossing; `quiet` and `quiet2` never cross (for zscore, quiet2 crosses
// against too short a history).
local beyond(sig, x) = if sig.op == '>' then x else -x;
// unit scales a level signal's steps: a tenth, a hundredth for funding
// rates, whose two levels are 0.2 apart.
local unit(sig) = if std.startsWith(sig.level, 'fundingRate') then 0.01 else 0.1;
local rowsOf(sig) =
  local T = level(sig);
  if sig.kind == 'level' then
    local d(x) = T + beyond(sig, x * unit(sig) * 10);
    { c: 2, history: [d(-0.4), d(-0.2)], crossing: [d(0.3), d(0.5), d(0.1), T, d(0.2)], again: 4, quiet: [d(0.1), d(0.3), d(0.2), d(0.4), d(0.1), d(0.25)], quiet2: [d(-0.1), d(-0.3), d(-0.2), d(-0.4)] }
  else if sig.kind == 'change' then
    local d(x) = 1000 * (1 + beyond(sig, x));
    { c: 2, history: [1000, 1000], crossing: [d(0.08), d(0.08), d(0.08), d(0.08) * (1 + beyond(sig, 0.1))], again: 3, quiet: [1000, 1010, 995, 1005, 990, 1000], quiet2: [500, 505, 500, 495] }
  else if sig.kind == 'ratio' then
    local c = 20;
    { c: 3, history: [c, c, c], crossing: [c * (T + 0.5), c * (T + 0.5), c, c, c * (T + 2.5)], again: 4, quiet: [c, c * 1.1, c, c * 0.9, c, c], quiet2: [c * (T + 0.5) / 4, c * (T + 0.5) / 4, c * (T + 0.5) / 4, c * (T + 0.5) / 4] }
  else
    local signed = std.objectHas(sig, 'sign');
    local c = if signed then 0 else 10;
    local w = if signed then 10 else 1;
    local alt = [if k % 2 == 0 then c - w else c + w for k in std.range(0, 15)];
    { c: 16, history: alt, crossing: [c + beyond(sig, 7 * w), c + beyond(sig, 8 * w), c, c + beyond(sig, 7 * w)], again: 3, quiet: alt + [c, c - w, c + w], quiet2: [c - w, c + w, c - w, c + beyond(sig, 7 * w), c] };

// The three cases of one signal: input series and checks, on its five
// assets (distinct from those of the other signals of its metric).
local cases(sig, assets) =
  local a = assets[0];
  local r = rowsOf(sig);
  local values = r.history + r.crossing;
  local n = std.length(values);
  local segs = rowSegs(values);
  local cross = served(r.c);
  local quietN = std.length(r.quiet);
  local quiet2N = std.length(r.quiet2);
  // stale: the rows stop after row c-1; three days later the provider
  // sends row c, with its own (old) time.
  local late = served(r.c + 3);
  local staleValues = rowSegs(r.history) + [{ v: r.crossing[0], from: late }];
  local staleTimes = timeSegs(r.c) + [{ v: rowTime(r.c), from: late }];
  // revised: row c-1's value changes across the level, its time does not.
  local revise = served(r.c - 1) + 600;
  local revisedValues = rowSegs(r.history) + [{ v: r.crossing[0], from: revise }];
  local revisedTimes = timeSegs(r.c);
  {
    crossing: {
      end: served(n - 1) + E,
      series(end): series(sig, a, segs, timeSegs(n), end, 2),
      checks:
        silent(sig, [cross - E])
        + [firing(sig, cross, [alert(sig, a, valueAt(sig, segs, cross))])]
        + silent(sig, [cross + E, served(r.c + 1), served(r.c + 1) + E, served(r.c + 2)])
        + [firing(sig, served(r.c + r.again), [alert(sig, a, valueAt(sig, segs, served(r.c + r.again)))])],
    },
    quiet: {
      end: served(quietN - 1) + E,
      series(end): series(sig, assets[1], rowSegs(r.quiet), timeSegs(quietN), end)
                   + series(sig, assets[2], rowSegs(r.quiet2), timeSegs(quiet2N), end),
      checks: silent(sig, std.flattenArrays([[served(k), served(k) + E] for k in std.range(1, quietN - 1)]) + [self.end]),
    },
    stale: {
      end: late + E,
      series(end): series(sig, assets[3], staleValues, staleTimes, end)
                   + series(sig, assets[4], revisedValues, revisedTimes, end),
      checks: silent(sig, [revise, revise + E, late, late + E, self.end]),
    },
  };

// The signals of one kind share one test group and timeline, their
// cases told apart by their assets; a group's checks of one alert at one
// time expect the alerts of every case together.
// The assets of a signal: five of its own among the signals of its metric.
local assetsOf(sig) =
  local same = [x.alert for x in list.signals if x.metric == sig.metric];
  local i = std.find(sig.alert, same)[0];
  local pool =
    if sig.metric == 'onchain_stablecoin_events'
    then ['usdt', 'usdc', 'dai', 'tusd', 'busd', 'pyusd', 'fdusd', 'usde', 'gusd', 'usdp']
    else ['btc', 'eth', 'xrp', 'trx', 'ada', 'sol', 'dot', 'ltc', 'bch', 'link'];
  pool[5 * i:5 * i + 5];

local kinds = {
  level: 'signals on a level',
  change: 'signals on the change from the row before',
  ratio: 'signals on the ratio to an average',
  zscore: 'signals against their history',
};

local group(kind) =
  local all = std.flattenArrays([
    local c = cases(sig, assetsOf(sig));
    [c.crossing, c.quiet, c.stale]
    for sig in list.signals
    if sig.kind == kind
  ]);
  local end = std.foldl(std.max, [c.end for c in all], 0);
  local checks = std.flattenArrays([c.checks for c in all]);
  local key(c) = c.alertname + ' ' + c.eval_time;
  local keys = std.set([key(c) for c in checks]);
  {
    name: '%s: fire on their crossing rows, once; silent on rows that do not cross and on stale rows' % kinds[kind],
    interval: '1m',
    input_series: std.flattenArrays([c.series(end) for c in all]),
    alert_rule_test: [
      local same = [c for c in checks if key(c) == k];
      same[0] { exp_alerts: std.flattenArrays([c.exp_alerts for c in same]) }
      for k in keys
    ],
  };

{
  rule_files: ['signals.yml'],
  evaluation_interval: std.toString(E) + 'm',
  tests: [group(kind) for kind in std.objectFields(kinds)],
}
