// The On-chain signals dashboard: the series of the signal pack
// (mixin/alerts/signals.libsonnet) with the levels its rules fire on
// drawn as bands, per asset. Blue is the zone the provider's analysts
// read as historically low (undervalued, accumulation, buying power),
// red the zone they read as historically high (top zone, overheated,
// selling pressure). A function of _config, so that a level changed
// there moves its band too; mixin/dashboards/dashboards.libsonnet applies
// the conventions (selectors, variables, uid, __inputs).
local list = import '../alerts/signal-list.libsonnet';

local num(x) = if x == 0 then '0' else '%g' % x;

function(cfg)
  local s = cfg.signals;
  local lv = s.levels;
  local level(sig) = (if std.get(sig, 'negate', false) then -1 else 1) * lv[sig.level];
  local datasource = { type: 'prometheus', uid: '${datasource}' };

  // The panels: one per series and kind (the signals of one panel share
  // them), in the order of the list, grouped by category.
  local panelKey(sig) = sig.panel + ' ' + sig.kind;
  local keys = std.foldl(
    function(acc, sig) if std.member(acc, panelKey(sig)) then acc else acc + [panelKey(sig)],
    list.signals,
    []
  );
  local signalsOf(key) = [sig for sig in list.signals if panelKey(sig) == key];

  // What a panel draws, as the rules read it.
  local matchers(sig) =
    'job=~"$job", asset=~"$asset", window="$window"'
    + (if std.member(sig.params, 'exchange') then ', exchange=~"$exchange"' else '')
    + (if std.objectHas(sig, 'matchers') then ', ' + sig.matchers else '');
  local sel(sig) = '%s{%s}' % [sig.metric, matchers(sig)];
  local value(sig) = 'max without (instance, pod) (last_over_time(%s[1d]))' % sel(sig);
  // A function over a range of the family: a range selector, which also
  // reads a backfilled history of one sample a row (docs/history.md).
  local over(sig, fn, range) = 'max without (instance, pod) (%s(%s[%s]))' % [fn, sel(sig), range];
  local expr(sig) =
    if sig.kind == 'level' then value(sig)
    else if sig.kind == 'zscore' then
      '(%s - %s) / (%s > 0)' % [
        value(sig),
        over(sig, 'avg_over_time', '%dd' % s.historyDays),
        over(sig, 'stddev_over_time', '%dd' % s.historyDays),
      ]
    else if sig.kind == 'ratio' then
      '%s / (%s > 0)' % [value(sig), over(sig, 'avg_over_time', lv[sig.over])]
    else
      local before = 'max without (instance, pod) (last_over_time(%s[1d] offset 1d))' % sel(sig);
      '(%s - %s) / (%s > 0)' % [value(sig), before, before];
  local legend(sig) = std.join(' ', ['{{asset}}'] + ['{{%s}}' % p for p in sig.params] + (if std.objectHas(sig, 'matchers') then ['{{kind}}'] else []));

  local title(sig) =
    if sig.kind == 'level' then sig.panel
    else if sig.kind == 'zscore' then '%s against its %d days (z-score)' % [sig.panel, s.historyDays]
    else if sig.kind == 'ratio' then '%s over the %s average' % [sig.panel, lv[sig.over]]
    else '%s change from the row before' % sig.panel;
  local unit(sig) =
    if sig.kind == 'change' then 'percentunit'
    else if sig.kind == 'level' then sig.unit
    else 'none';

  // The bands: blue below the level of a signal that fires below, red
  // above the level of one that fires above.
  local bands(sigs) =
    local lows = [level(sig) for sig in sigs if sig.op == '<'];
    local highs = [level(sig) for sig in sigs if sig.op == '>'];
    [{ color: if lows != [] then 'blue' else 'transparent', value: null }]
    + (if lows != [] && (highs == [] || highs[0] != lows[0]) then [{ color: 'transparent', value: lows[0] }] else [])
    + (if highs != [] then [{ color: 'red', value: highs[0] }] else []);
  local levelsText(sigs) = std.join('; ', [
    '%s fires %s %s' % [sig.alert, if sig.op == '>' then 'above' else 'below', num(level(sig))]
    for sig in sigs
  ]);

  local panel(key, id, x, y) =
    local sigs = signalsOf(key);
    local sig = sigs[0];
    {
      type: 'timeseries',
      title: title(sig),
      id: id,
      datasource: datasource,
      gridPos: { h: 8, w: 8, x: x, y: y },
      // A z-score reads a month of samples a point: one point a day.
      [if sig.kind == 'zscore' then 'interval']: '1d',
      fieldConfig: {
        defaults: {
          unit: unit(sig),
          thresholds: { mode: 'absolute', steps: bands(sigs) },
          custom: {
            thresholdsStyle: { mode: 'line+area' },
          },
        },
        overrides: [],
      },
      options: {
        legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
        tooltip: { mode: 'multi', sort: 'desc' },
      },
      targets: [{
        refId: 'A',
        datasource: datasource,
        expr: expr(sig),
        legendFormat: legend(sig),
        range: true,
        instant: false,
      }],
      description: "%s (%s, %s). Bands: %s. The levels are historical readings of the provider's analysts, not advice." % [
        title(sig),
        sig.metric,
        sig.path,
        levelsText(sigs),
      ],
    };

  // Rows of three panels under a row per category.
  local titles = {
    valuation: 'Valuation',
    flows: 'Exchange flows',
    derivatives: 'Derivatives',
    stablecoins: 'Stablecoins',
    miners: 'Miners',
  };
  local categoryKeys(c) = [k for k in keys if signalsOf(k)[0].category == c];
  local heights = [1 + 8 * std.ceil(std.length(categoryKeys(c)) / 3) for c in list.categories];
  local top(i) = std.foldl(function(a, h) a + h, heights[:i], 0);
  local ids(i) = std.foldl(function(a, c) a + 1 + std.length(categoryKeys(c)), list.categories[:i], 0);
  local panels = std.flattenArrays([
    local c = list.categories[i];
    local ks = categoryKeys(c);
    [{
      type: 'row',
      title: titles[c],
      id: ids(i) + 1,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y: top(i) },
      panels: [],
    }] + [
      panel(ks[j], ids(i) + 2 + j, 8 * (j % 3), top(i) + 1 + 8 * std.floor(j / 3))
      for j in std.range(0, std.length(ks) - 1)
    ]
    for i in std.range(0, std.length(list.categories) - 1)
  ]);

  local endpoints = std.join('|', std.set([sig.endpoint for sig in list.signals]));
  local variable(name, label, query, all) = {
    name: name,
    label: label,
    type: 'query',
    datasource: datasource,
    query: query,
    definition: query,
    refresh: 2,
    sort: 1,
    hide: 0,
    regex: '',
    options: [],
    current: {},
    multi: all,
    includeAll: all,
    [if all then 'allValue']: '.*',
  };

  {
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    description: "The on-chain signals of the mixin's signal pack (docs/signals.md) with the levels its rules fire on as bands, per asset (onchain_exporter). The levels are historical readings of the data provider's analysts, not advice.",
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    links: [
      {
        type: 'dashboards',
        tags: ['onchain_exporter'],
        asDropdown: true,
        title: 'onchain_exporter',
        includeVars: true,
        keepTime: true,
      },
    ],
    panels: panels,
    refresh: '1m',
    schemaVersion: 39,
    tags: ['onchain_exporter', 'onchain', 'signals'],
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
          refresh: 1,
          regex: '',
          options: [],
          includeAll: false,
          multi: false,
        },
        variable('job', 'Job', 'label_values(onchain_data_timestamp_seconds{api="data"}, job)', true),
        variable('asset', 'Asset', 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", endpoint=~"%s"}, asset)' % endpoints, true),
        variable('window', 'Window', 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", endpoint=~"%s", asset=~"$asset"}, window)' % endpoints, false),
        variable('exchange', 'Exchange', 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", endpoint=~"%s", asset=~"$asset"}, exchange)' % endpoints, true),
      ],
    },
    time: { from: 'now-90d', to: 'now' },
    timepicker: {},
    timezone: 'utc',
    title: 'On-chain signals',
    uid: 'onchain-signals',
    version: 1,
    weekStart: '',
  }
