// The dashboards of the onchain_exporter mixin. Each <name>.libsonnet
// beside this file holds one dashboard's panels and variables as Grafana's
// JSON model (plain jsonnet, no grafonnet); this file applies what every
// dashboard shares, from _config:
//
// - every query selects job=~"$job", instance=~"$instance" (and
//   cluster=~"$cluster" with showMultiCluster): a panel's source writes
//   job=~"$job" and the rest is added here;
// - the job variable lists the jobs of onchainSelector; job and instance
//   variables offer All as .+; a cluster variable with showMultiCluster;
// - a stable uid, not editable, no id, the time zone and refresh of
//   _config;
// - __inputs for an import on grafana.com (Grafana asks for a Prometheus
//   data source and puts it in the datasource variable), beside the
//   datasource variable that provisioning uses;
// - the fields Grafana's schema requires that the panels leave at their
//   defaults, so that the dashboards decode strictly (dashboards_test.go).
// A source is the dashboard, or a function of _config that returns it
// (the signals dashboard draws the levels in force).
local sources = {
  'onchain-overview': import 'onchain-overview.libsonnet',
  'onchain-stablecoins': import 'onchain-stablecoins.libsonnet',
  'onchain-equities-consensus': import 'onchain-equities-consensus.libsonnet',
  'onchain-exporter-health': import 'onchain-exporter-health.libsonnet',
  'onchain-signals': import 'onchain-signals.libsonnet',
};

// fill returns o with every field of d that o lacks, recursively in the
// objects both have.
local fill(d, o) = o + {
  [k]: if !std.objectHas(o, k) then d[k]
  else if std.isObject(d[k]) && std.isObject(o[k]) then fill(d[k], o[k])
  else o[k]
  for k in std.objectFields(d)
};

// Per panel type, the options Grafana's schema requires.
local panelDefaults = {
  timeseries: { options: { legend: { calcs: [], displayMode: 'list', placement: 'bottom', showLegend: true } } },
  stat: { options: { showPercentChange: false, percentChangeColorMode: 'standard', wideLayout: true } },
  table: { options: { frameIndex: 0, footer: { reducer: [], show: false } } },
  gauge: { options: { orientation: 'auto', sizing: 'auto', minVizWidth: 75, minVizHeight: 75 } },
  bargauge: {
    options: {
      valueMode: 'color',
      namePlacement: 'auto',
      orientation: 'horizontal',
      sizing: 'auto',
      minVizWidth: 8,
      minVizHeight: 16,
      maxVizHeight: 300,
      legend: { calcs: [], displayMode: 'list', placement: 'bottom', showLegend: false },
    },
  },
};

local linkDefaults = { icon: 'external link', tooltip: '', targetBlank: false };

// withMatchers adds matchers to the text of a vector selector.
local withMatchers(selector, matchers) =
  if std.endsWith(selector, '}')
  then std.substr(selector, 0, std.length(selector) - 1) + ', ' + matchers + '}'
  else selector + '{' + matchers + '}';

// labelValuesSelector is X of label_values(X, label).
local labelValuesSelector(query) =
  local inner = std.substr(query, std.length('label_values('), std.length(query) - std.length('label_values(') - 1);
  local parts = std.split(inner, ', ');
  std.join(', ', parts[:std.length(parts) - 1]);

local datasourceRef = { type: 'prometheus', uid: '${datasource}' };

local queryVariable(name, label, query, all) = {
  name: name,
  label: label,
  type: 'query',
  datasource: datasourceRef,
  query: query,
  definition: query,
  refresh: 2,
  sort: 1,
  hide: 0,
  regex: '',
  options: [],
  current: if all then { selected: true, text: ['All'], value: ['$__all'] } else { selected: false, text: '', value: '' },
  multi: all,
  includeAll: all,
  [if all then 'allValue']: '.+',
};

local dashboard(uid, src, cfg) =
  local clusterMatcher = if cfg.showMultiCluster then cfg.clusterLabel + '=~"$cluster", ' else '';
  local matchers = clusterMatcher + 'job=~"$job", instance=~"$instance"';
  // A source writes job=~"$job" (the health dashboard also the instance
  // matcher): every query gets the shared matchers in its place.
  local rewrite(expr) = std.strReplace(
    std.strReplace(expr, 'job=~"$job", instance=~"$instance"', 'job=~"$job"'),
    'job=~"$job"',
    matchers
  );
  local vars = src.templating.list;
  local jobSource = [v for v in vars if v.name == 'job'][0];
  local jobMetric = labelValuesSelector(jobSource.query);
  local sel(m) = withMatchers(jobMetric, m);
  local shared = [
    {
      name: 'datasource',
      label: 'Data source',
      type: 'datasource',
      query: 'prometheus',
      current: { selected: false, text: '${DS_PROMETHEUS}', value: '${DS_PROMETHEUS}' },
      hide: 0,
      refresh: 1,
      regex: '',
      options: [],
      includeAll: false,
      multi: false,
    },
  ] + (
    if cfg.showMultiCluster then [
      queryVariable('cluster', 'Cluster', 'label_values(%s, %s)' % [sel(cfg.onchainSelector), cfg.clusterLabel], false),
    ] else []
  ) + [
    queryVariable('job', 'Job', 'label_values(%s, job)' % sel(clusterMatcher + cfg.onchainSelector), true),
    queryVariable('instance', 'Instance', 'label_values(%s, instance)' % sel(clusterMatcher + 'job=~"$job"'), true),
  ];
  local own = [
    v + (
      if v.type == 'query' then {
        query: rewrite(v.query),
        definition: rewrite(v.definition),
        current: if std.get(v, 'includeAll', false)
        then { selected: true, text: ['All'], value: ['$__all'] }
        else { selected: false, text: '', value: '' },
      } else {}
    )
    for v in vars
    if !std.member(['datasource', 'cluster', 'job', 'instance'], v.name)
  ];
  local panel(p) = fill(std.get(panelDefaults, p.type, {}), p) + {
    [if std.objectHas(p, 'targets') then 'targets']: [
      t { expr: rewrite(t.expr) }
      for t in p.targets
    ],
    [if std.objectHas(p, 'panels') then 'panels']: [panel(c) for c in p.panels],
  };
  src {
    __inputs: [{
      name: 'DS_PROMETHEUS',
      label: 'Prometheus',
      description: 'The Prometheus that scrapes onchain_exporter.',
      type: 'datasource',
      pluginId: 'prometheus',
      pluginName: 'Prometheus',
    }],
    uid: cfg.dashboardUIDPrefix + uid,
    id: null,
    editable: false,
    timezone: cfg.dashboardTimezone,
    refresh: cfg.dashboardRefresh,
    links: [fill(linkDefaults, l) for l in src.links],
    panels: [panel(p) for p in src.panels],
    templating: { list: shared + own },
  };

{
  grafanaDashboards+:: {
    [name + '.json']: dashboard(
      name,
      if std.isFunction(sources[name]) then sources[name]($._config) else sources[name],
      $._config
    )
    for name in std.objectFields(sources)
  },
}
