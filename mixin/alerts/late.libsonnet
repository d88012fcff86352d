// Late rows: the provider has not published a row by the time the
// exporter's learned release time and its spread say it would have.
//
// The exporter learns, per endpoint and window, when the next row is due
// at the latest and serves it as onchain_exporter_row_due_timestamp_seconds
// (docs/signals.md, Late rows): the end of the next row's interval, plus
// the learned publication delay, plus the margin the spread of the
// delays the recent rows of the API's endpoints of that window showed
// explains, plus the wait to the poll that would find such a row. Past
// it, with no newer row served, the row is late: the provider is behind
// its own habit, minutes after the fact, where a status page that calls
// daily data fine up to two days old would say nothing.
//
// OnchainDataLate is raised once per endpoint (not per series, window,
// member or job): the windows' due times are read across members and
// jobs (the newest, as any of them serving the row clears it), and the
// endpoint is late when any of its windows is. OnchainProviderLate is
// raised once per API when a share of its endpoints are late at once; the
// example alertmanager.yml then inhibits the endpoints' own alerts. Not
// while the exporter itself holds its calls (an API paused, or every
// series of a window failing: that window does not count): the rows
// would then be late here, not upstream, and other alerts say why.
//
// Off until the exporter serves the due time (_config.dataLate.enabled);
// examples/late.yml is the group rendered, for its tests.
local num(x) = if x == 0 then '0' else '%g' % x;

local indent(text, n) = std.join('\n', [
  if line == '' then line else std.repeat(' ', n) + line
  for line in std.split(std.rstripChars(text, '\n'), '\n')
]);

{
  _config+:: {
    dataLate+: {
      enabled: false,
      // How long an endpoint stays past due before it is late: covers a
      // row found by the exporter just before its due time passed and not
      // yet scraped.
      'for': '2m',
      // OnchainProviderLate: at least this share of an API's endpoints,
      // and at least this many, late at once.
      incidentShare: 0.5,
      incidentMinEndpoints: 3,
    },
  },

  local cfg = $._config,
  local c = cfg.dataLate,
  // The labels an API's incident is raised per: namespace (and cluster),
  // not job, as the exporter-wide families appear in every job that
  // scrapes them.
  local apiLabels = (if cfg.showMultiCluster then cfg.clusterLabel + ', ' else '') + 'namespace, api',
  local endpointLabels = apiLabels + ', endpoint',

  // lateSeconds is how far past due each endpoint's next row is (negative
  // while it is not due), once per endpoint: its windows' due times, but
  // not those of a window whose every series fails (a provider's outage
  // fails the windows polled meanwhile, while a day window not due yet
  // still holds the success of its last refresh).
  local lateSeconds = |||
    max by (%(endpoint)s) (
      time() - max by (%(endpoint)s, window) (onchain_exporter_row_due_timestamp_seconds{%(sel)s})
      unless on (%(endpoint)s, window)
        max by (%(endpoint)s, window) (onchain_exporter_query_success{%(sel)s}) == 0
    )
    unless on (%(api)s)
      max by (%(api)s) (onchain_exporter_api_paused{%(sel)s}) > 0
  ||| % { endpoint: endpointLabels, api: apiLabels, sel: cfg.onchainSelector },

  // lateEndpoints are the endpoints past due, with how far.
  local lateEndpoints = |||
    (
    %s
    ) > 0
  ||| % indent(lateSeconds, 2),

  local late = {
    alert: 'OnchainDataLate',
    expr: lateEndpoints,
    'for': c['for'],
    labels: {
      severity: 'info',
    },
    annotations: {
      summary: 'The provider has not published the next row of an endpoint by its usual time.',
      description: 'The next row of {{ $labels.endpoint }} ({{ $labels.api }} API) is {{ $value | humanizeDuration }} past the time by which its learned publication delay and spread say it comes; every series of the endpoint waits for it. The provider is late: no fault of the exporter.',
      runbook_url: std.strReplace(cfg.runbookURLPattern, 'operations.md', 'signals.md') % std.asciiLower('OnchainDataLate'),
    },
  },

  local incident = {
    alert: 'OnchainProviderLate',
    expr: |||
      (
        count by (%(api)s) (
      %(late)s
        )
          /
        count by (%(api)s) (
          max by (%(endpoint)s) (onchain_exporter_row_due_timestamp_seconds{%(sel)s})
        )
      ) >= %(share)s
      and on (%(api)s)
      count by (%(api)s) (
      %(late)s
      ) >= %(min)d
    ||| % {
      api: apiLabels,
      endpoint: endpointLabels,
      sel: cfg.onchainSelector,
      late: indent(lateEndpoints, 4),
      share: num(c.incidentShare),
      min: c.incidentMinEndpoints,
    },
    'for': c['for'],
    labels: {
      severity: 'warning',
    },
    annotations: {
      summary: 'Many endpoints of an upstream API are late at once: an incident at the provider.',
      description: '{{ $value | humanizePercentage }} of the endpoints of the {{ $labels.api }} API the exporter reads (at least %(min)d) have not published their next row by their usual time; the provider is having an incident. OnchainDataLate of each is inhibited meanwhile.' % { min: c.incidentMinEndpoints },
      runbook_url: std.strReplace(cfg.runbookURLPattern, 'operations.md', 'signals.md') % std.asciiLower('OnchainProviderLate'),
    },
  },

  prometheusAlerts+:: {
    groups+: if c.enabled then [{
      name: 'onchain-data-late',
      rules: [late, incident],
    }] else [],
  },
}
