// The alerts of the onchain_exporter mixin, from _config
// (config.libsonnet). Severity: critical pages, warning goes to a ticket
// queue, info is for a channel. OnchainDataStale exists at two
// severities; the example alertmanager.yml inhibits the warning while the
// critical one fires. Market signals are not faults of the exporter: they
// carry severity info and category market, and the example
// alertmanager.yml routes them to the desk. The group
// onchain-market-signals holds OnchainConsensusFlipped alone; the data
// API's signals are the signal pack's (signals.libsonnet, off by
// default).
//
// One incident pages once. A cluster (--cluster.*, docs/operations.md,
// High availability) scraped pod by pod serves every data series and
// every per-tuple family once per member, with the same values: the rules
// read those across members (max without (memberLabels), or min where any
// member's failure counts, or count where they say on how many), and raise
// the alerts of an API once per job and namespace (and cluster, with
// showMultiCluster). A target down is raised once per process, whatever
// the number of collect[] jobs that scrape it. With one replica the rules
// fire as they did, without the instance label where they aggregate.
//
// Summaries are static sentences; descriptions say which job, API or
// series, with the values. Every alert's runbook_url is its section of
// docs/operations.md (runbookURLPattern).
//
// A series the key's plan refuses (onchain_exporter_query_refused 1, its
// query_success 0) is not a fault: it costs that series alone, for as long
// as the plan stays. OnchainQueryRefusedByPlan says so at info; every rule
// that reads query_success == 0 as a failure leaves such series out.
{
  // num writes a threshold as PromQL reads it: '%g' % 0 overflows in
  // go-jsonnet v0.20.0 (the version mixtool pins); %g for any other value.
  local num(x) = if x == 0 then '0' else '%g' % x,

  // _config with its numbers written by num, for the rules' %(name)s.
  local cfg = $._config { [k]: num($._config[k]) for k in std.objectFields($._config) if std.isNumber($._config[k]) },

  // The series whose last refresh failed for a reason other than the
  // key's plan: query_success 0, query_refused not 1. c is cfg.
  local failing(c) = '(onchain_exporter_query_success{%(onchainSelector)s} == 0 unless onchain_exporter_query_refused{%(onchainSelector)s} == 1)' % c,

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'onchain-exporter-health',
        rules: [
          // A cluster (or a Deployment's replicas) is the targets of one
          // job in one namespace (groupLabels): while one of them is
          // scraped, every series is served. OnchainExporterDown pages when
          // none is, once per process whatever the number of collect[]
          // jobs that scrape it; OnchainExporterMemberDown says, at warning,
          // that a member is down while the others serve.
          {
            alert: 'OnchainExporterDown',
            expr: |||
              min by (%(targetLabels)s) (
                  up{%(onchainSelector)s}
                unless on (%(groupLabels)s)
                  max by (%(groupLabels)s) (up{%(onchainSelector)s}) > 0
              )
            ||| % cfg,
            'for': '5m',
            labels: {
              severity: 'critical',
            },
            annotations: {
              summary: 'No member of an onchain_exporter cluster is being scraped.',
              description: 'Prometheus has failed to scrape {{ $labels.instance }} for 5 minutes, and every other target of its job is down too (the other members of its cluster, if it has any): no on-chain series of that job are being collected.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainExporterDown'),
            },
          },
          {
            alert: 'OnchainExporterMemberDown',
            expr: |||
              min by (%(targetLabels)s) (up{%(onchainSelector)s}) == 0
                unless on (%(targetLabels)s)
              min by (%(targetLabels)s) (
                  up{%(onchainSelector)s}
                unless on (%(groupLabels)s)
                  max by (%(groupLabels)s) (up{%(onchainSelector)s}) > 0
              )
            ||| % cfg,
            'for': '5m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'A member of an onchain_exporter cluster is down.',
              description: 'Prometheus has failed to scrape {{ $labels.instance }} for 5 minutes (in one of the jobs that scrape it at least); the other members of its cluster are scraped and serve every series, with one member fewer to take a loss.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainExporterMemberDown'),
            },
          },
          // OnchainExporterDown needs an up series: a target gone from
          // discovery (the Service, the pod or the scrape job removed) has none.
          {
            alert: 'OnchainExporterAbsent',
            expr: |||
              absent(up{%(onchainSelector)s})
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'critical',
            },
            annotations: {
              summary: 'No onchain_exporter target is being scraped.',
              description: "For 15 minutes Prometheus{{ with $externalLabels.cluster }} of cluster {{ . }}{{ end }} has had no target of the jobs the rules select: the exporter's scrape job, Service or pod is gone from discovery, so OnchainExporterDown cannot fire and no on-chain series are collected.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainExporterAbsent'),
            },
          },
          // The exporter pauses every call of an API for 30 minutes (or until a
          // reload) after a 401/403, with onchain_exporter_api_paused{code} set.
          // Errors of the key count too (unauthorized, API_KEY_REQUIRED,
          // INVALID_API_KEY), gated on a query failing now, so that a past
          // error does not page while queries work. A refusal of one request
          // by the key's plan (PLAN_REQUIRED, plan_required, a data API 403:
          // forbidden) is counted by the provider's code but is no auth
          // failure: only a pause (a 403 on everything) pages for it. Codes
          // match in any case: the Indicator API's words are the lower-case
          // forms of the consensus codes. A counter series that appears
          // with its first error (a code not exported from the start, or a
          // series of a new exporter or pod) is a rise increase() cannot
          // see, hence the `unless ... offset` branch for a series that did
          // not exist an hour ago. That branch requires the counter above
          // 0: the known codes are exported at 0 from the start, and in a
          // new series' first hour a 0 is no auth failure (an HTTP 500 would
          // page as one).
          // The errors and the queries are joined per process
          // (targetLabels), not per job: with the collect[] jobs of
          // examples/prometheus.yml the errors are the first job's (the
          // second drops the exporter-wide families) and the Indicator and
          // Consensus APIs' queries the second's. A series the key's plan
          // refuses is not a failing query (failing): a plan that does not
          // include one endpoint is OnchainQueryRefusedByPlan, not a page.
          {
            alert: 'OnchainUpstreamAuthFailing',
            expr: |||
              max by (%(groupLabels)s, api) (onchain_exporter_api_paused{%(onchainSelector)s, code=~"(?i)unauthorized|forbidden|api_key_required|invalid_api_key|plan_required"}) > 0
                or
              count by (%(groupLabels)s, api) (
                  (
                      increase(onchain_exporter_api_errors_total{%(onchainSelector)s, code=~"(?i)unauthorized|api_key_required|invalid_api_key"}[1h]) > 0
                    or
                      (
                          onchain_exporter_api_errors_total{%(onchainSelector)s, code=~"(?i)unauthorized|api_key_required|invalid_api_key"} > 0
                        unless
                          onchain_exporter_api_errors_total{%(onchainSelector)s, code=~"(?i)unauthorized|api_key_required|invalid_api_key"} offset 1h
                      )
                  )
                and on (%(targetLabels)s, api)
                  %(failing)s
              )
            ||| % (cfg { failing: failing(cfg) }),
            'for': '5m',
            labels: {
              severity: 'critical',
            },
            annotations: {
              summary: "An upstream API rejects the exporter's credential.",
              description: 'Queries of job {{ $labels.job }} to the {{ $labels.api }} API fail with an authentication or plan error (401/403, INVALID_API_KEY, PLAN_REQUIRED or API_KEY_REQUIRED); its series are served stale until they expire.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainUpstreamAuthFailing'),
            },
          },
          // A 429 pauses the API for Retry-After (1 minute without the header).
          {
            alert: 'OnchainUpstreamRateLimited',
            expr: |||
              sum by (%(groupLabels)s, api) (increase(onchain_exporter_api_errors_total{%(onchainSelector)s, code=~"(?i)too_many_requests|rate_limit_exceeded"}[10m])) > 0
                or
              max by (%(groupLabels)s, api) (onchain_exporter_api_paused{%(onchainSelector)s, code=~"(?i)too_many_requests|rate_limit_exceeded"}) > 0
                or
              max by (%(groupLabels)s, api) (onchain_exporter_ratelimit_remaining{%(onchainSelector)s} == 0)
            ||| % cfg,
            'for': '10m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'An upstream API is rate-limiting the exporter.',
              description: 'The {{ $labels.api }} API has answered the exporter (job {{ $labels.job }}) 429 (too_many_requests / RATE_LIMIT_EXCEEDED) or reported no requests left in the current minute for 10 minutes.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainUpstreamRateLimited'),
            },
          },
          {
            alert: 'OnchainDailyQuotaNearlyUsed',
            expr: |||
              max without (%(memberLabels)s) (onchain_exporter_daily_quota_used{%(onchainSelector)s})
                / (max without (%(memberLabels)s) (onchain_exporter_daily_quota_limit{%(onchainSelector)s}) > 0)
                > %(dailyQuotaUsedRatio)s
            ||| % cfg,
            'for': '5m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: "An upstream API's daily quota is nearly used.",
              description: "The exporter (job {{ $labels.job }}) has used {{ $value | humanizePercentage }} of the {{ $labels.api }} API's daily quota; it resets at 00:00 UTC and requests then fail with DAILY_LIMIT_EXCEEDED.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainDailyQuotaNearlyUsed'),
            },
          },
          // DAILY_LIMIT_EXCEEDED pauses the API until 00:00 UTC. The for: keeps
          // a quota that runs out in the last minutes of the UTC day, and
          // resets at 00:00, from paging. Errors and failing queries are
          // joined per process, as OnchainUpstreamAuthFailing's.
          {
            alert: 'OnchainDailyQuotaExhausted',
            expr: |||
              max by (%(groupLabels)s, api) (onchain_exporter_api_paused{%(onchainSelector)s, code=~"(?i)daily_limit_exceeded"}) > 0
                or
              sum by (%(groupLabels)s, api) (
                  increase(onchain_exporter_api_errors_total{%(onchainSelector)s, code=~"(?i)daily_limit_exceeded"}[1h]) > 0
                and on (%(targetLabels)s, api)
                  %(failing)s
              )
            ||| % (cfg { failing: failing(cfg) }),
            'for': '5m',
            labels: {
              severity: 'critical',
            },
            annotations: {
              summary: "An upstream API's daily quota is exhausted.",
              description: 'The {{ $labels.api }} API answers DAILY_LIMIT_EXCEEDED to the exporter (job {{ $labels.job }}); no series of it refresh until 00:00 UTC.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainDailyQuotaExhausted'),
            },
          },
          // daily_budget (or the upstream's X-Daily-Limit when lower) is paced
          // over the UTC day: the calls used stay under the pace line, the
          // budget times the share of the day gone, plus the bucket's burst
          // of a 96th of the budget. A start (or a first fill) spends that
          // burst at once, and extrapolated over the hours left it would
          // reach any budget, the more so the earlier in the day: so the
          // alert also needs the count above the pace line by more than the
          // burst, which the exporter's own calls never are. What is left is
          // the budget truly outrun: other clients of the same key
          // (X-Daily-Used), a plan that counted wrong. The line is drawn at
          // each sample's own time, so a count scraped before 00:00 UTC and
          // read after it is not taken for the new day's. After 23:00 UTC
          // the horizon is past and nothing fires. daily_calls_used is the
          // cluster's count on every member of a cluster: its max across
          // members, never its sum.
          {
            alert: 'OnchainDailyBudgetRunsOutEarly',
            expr: |||
              (
                max without (%(memberLabels)s) (predict_linear(onchain_exporter_daily_calls_used{%(onchainSelector)s}[1h], 86400 - time() %% 86400 - 3600))
                  >
                max without (%(memberLabels)s) (onchain_exporter_daily_budget_calls{%(onchainSelector)s})
              )
              and
              max without (%(memberLabels)s) (
                onchain_exporter_daily_calls_used{%(onchainSelector)s}
                  - onchain_exporter_daily_budget_calls{%(onchainSelector)s} * (timestamp(onchain_exporter_daily_calls_used{%(onchainSelector)s}) %% 86400) / 86400
                  > onchain_exporter_daily_budget_calls{%(onchainSelector)s} / 96
              )
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: "An upstream API's daily budget runs out early at the current pace.",
              description: "At the pace of the last hour, the exporter (job {{ $labels.job }}) reaches the {{ $labels.api }} API's daily budget more than an hour before 00:00 UTC; from then on its calls are refused and its series go stale until the day resets.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainDailyBudgetRunsOutEarly'),
            },
          },
          // The configuration costs more than the budget, and the exporter
          // polls series less often than their rows come that nobody allowed
          // it to. A pattern entry that says coarsen: true accepts it for its
          // own series, and the budget's plan coarsens the series of
          // patterns first (docs/budget.md): those named one by one are cut
          // only once every pattern's are polled weekly, a window's
          // coarsening factor then at a week over its spacing (7 for day,
          // 168 hour, 1008 10min, 10080 min). A pattern that does not allow
          // it and would be cut is refused at load and reload. So the alert
          // fires when the API has no pattern entry (coarsen: is a
          // pattern's key alone), or when a window is at that weekly cap.
          // Not seen: a pattern without coarsen: true cut by a budget lower
          // at run time than at load (X-Daily-Limit, the key's plan read
          // again); the log names it, no metric says which entries allow
          // coarsening.
          {
            alert: 'OnchainForecastExceedsBudget',
            expr: |||
              (
                sum by (%(groupLabels)s, api) (max without (%(memberLabels)s) (onchain_exporter_forecast_calls_per_day{%(onchainSelector)s}))
                  > on (%(groupLabels)s, api)
                max by (%(groupLabels)s, api) (onchain_exporter_daily_budget_calls{%(onchainSelector)s})
              )
              unless on (%(groupLabels)s, api)
              (
                  count by (%(groupLabels)s, api) (onchain_exporter_pattern_tuples{%(onchainSelector)s} > 0)
                unless on (%(groupLabels)s, api)
                  (
                      onchain_exporter_coarsening_factor{%(onchainSelector)s, window="day"} >= 7
                    or
                      onchain_exporter_coarsening_factor{%(onchainSelector)s, window="hour"} >= 168
                    or
                      onchain_exporter_coarsening_factor{%(onchainSelector)s, window="10min"} >= 1008
                    or
                      onchain_exporter_coarsening_factor{%(onchainSelector)s, window="min"} >= 10080
                  )
              )
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'The configuration costs more calls a day than the daily budget.',
              description: "The configuration in force (job {{ $labels.job }}) would make {{ $value | humanize }} calls a day to the {{ $labels.api }} API, more than its daily budget (daily_budget or the upstream's X-Daily-Limit); the exporter polls series that no pattern's coarsen: true covers (entries named one by one, or every series once the patterns' are polled weekly) less often than their rows come.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainForecastExceedsBudget'),
            },
          },
          {
            alert: 'OnchainUpstreamErrorRatioHigh',
            expr: |||
              sum by (%(groupLabels)s, api) (rate(onchain_exporter_upstream_requests_total{%(onchainSelector)s, code!~"2.."}[%(rateInterval)s]))
                /
              sum by (%(groupLabels)s, api) (rate(onchain_exporter_upstream_requests_total{%(onchainSelector)s}[%(rateInterval)s]))
                > %(upstreamErrorRatio)s
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'Many requests to an upstream API fail.',
              description: "{{ $value | humanizePercentage }} of the exporter's requests (job {{ $labels.job }}) to the {{ $labels.api }} API have failed (non-2xx status or transport error), more than %s %%, for 15 minutes." % num(100 * $._config.upstreamErrorRatio),
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainUpstreamErrorRatioHigh'),
            },
          },
          // One alert per API, not per series: an API that is down fails every
          // series of it at once. A series counts once, failing on any member.
          // A series the key's plan refuses is OnchainQueryRefusedByPlan's.
          {
            alert: 'OnchainQueryFailing',
            expr: |||
              count by (%(groupLabels)s, api) (
                  min without (%(memberLabels)s) (onchain_exporter_query_success{%(onchainSelector)s}) == 0
                unless
                  max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1
              )
            ||| % cfg,
            'for': '30m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'Series of an upstream API do not refresh.',
              description: 'The last refreshes of {{ $value }} series of the {{ $labels.api }} API (job {{ $labels.job }}) have failed for 30 minutes, for another reason than the key\'s plan; each serves its last good value until max_staleness, then disappears. onchain_exporter_query_success{api="{{ $labels.api }}"} == 0 unless onchain_exporter_query_refused == 1 lists them.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainQueryFailing'),
            },
          },
          // The plan refuses some series of an API: they are held (asked
          // again after a reload, or 24 hours on) and the rest is served.
          // Not a fault of the exporter or the upstream, and no failure of
          // the API: a signal that the configuration asks for more than the
          // plan includes.
          {
            alert: 'OnchainQueryRefusedByPlan',
            expr: |||
              count by (%(groupLabels)s, api) (max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1)
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'info',
            },
            annotations: {
              summary: "The key's plan refuses series of an upstream API.",
              description: '{{ $value }} series of the {{ $labels.api }} API (job {{ $labels.job }}) are refused by the key\'s plan: the exporter holds them, asks again after a reload or 24 hours on, and serves every other series of the API. onchain_exporter_query_refused{api="{{ $labels.api }}"} == 1 lists them.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainQueryRefusedByPlan'),
            },
          },
          // A collector fails when a series of it is not served fresh: one
          // the key's plan refuses is, for as long as the plan stays, and
          // does not count when it is the only kind of failure the API has.
          {
            alert: 'OnchainCollectorFailing',
            expr: |||
              count without (%(memberLabels)s) (onchain_exporter_scrape_collector_success{%(onchainSelector)s} == 0)
                unless on (%(groupLabels)s, collector)
              label_replace(
                  count by (%(groupLabels)s, api) (max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1)
                unless on (%(groupLabels)s, api)
                  count by (%(groupLabels)s, api) (
                      min without (%(memberLabels)s) (onchain_exporter_query_success{%(onchainSelector)s}) == 0
                    unless
                      max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1
                  ),
                "collector", "$1", "api", "(.*)"
              )
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'An onchain_exporter collector fails.',
              description: "The {{ $labels.collector }} collector (job {{ $labels.job }}) has reported failure on every scrape for 15 minutes, on {{ $value }} member(s) of the exporter, for another reason than series the key's plan refuses; in a cluster the members share one outcome, so this is one alert.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainCollectorFailing'),
            },
          },
          {
            alert: 'OnchainConfigReloadFailed',
            expr: |||
              count without (%(memberLabels)s) (onchain_exporter_config_last_reload_successful{%(onchainSelector)s} == 0)
            ||| % cfg,
            'for': '5m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'An onchain_exporter configuration reload failed.',
              description: 'The last configuration reload of the exporter (job {{ $labels.job }}) failed on {{ $value }} member(s); they keep serving with the previous configuration.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainConfigReloadFailed'),
            },
          },
          // Entries with all or consensus asset names need the API's listing
          // endpoints. While those fail, the exporter serves everything else,
          // keeps such entries on their last good lists or leaves them out
          // (onchain_exporter_expansion_entries_waiting), and retries at least
          // every minute; a restart is not needed.
          {
            alert: 'OnchainExporterExpansionFailing',
            expr: |||
              min without (%(memberLabels)s) (onchain_exporter_expansion_success{%(onchainSelector)s}) == 0
            ||| % cfg,
            'for': '10m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'The exporter cannot expand its configuration entries.',
              description: "For 10 minutes the exporter (job {{ $labels.job }}; in a cluster, one member at least) has failed to read the {{ $labels.api }} API's listing endpoints (discovery, /api/equities, /assets) or to fit their answer to the configuration; entries using all or consensus asset names run on the last good lists or are not served at all.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainExporterExpansionFailing'),
            },
          },
          {
            alert: 'OnchainSeriesDeprecated',
            expr: |||
              max without (%(memberLabels)s) (onchain_exporter_query_deprecated{%(onchainSelector)s}) == 1
            ||| % cfg,
            'for': '1h',
            labels: {
              severity: 'info',
            },
            annotations: {
              summary: 'The upstream marks a series as deprecated.',
              description: 'The {{ $labels.api }} API answers "deprecated" for {{ $labels.endpoint }} ({{ $labels.exchange }}, job {{ $labels.job }}); its data may no longer update.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainSeriesDeprecated'),
            },
          },
        ],
      },
      // Cluster mode (--cluster.*, docs/operations.md, High availability).
      // Without it the cluster families are not exposed and these never fire.
      {
        name: 'onchain-exporter-cluster',
        rules: [
          // A member the cluster had is gone: not replaced, or cut off. What
          // the cluster had is the most members any member saw, held without a
          // break for 15 minutes in the last hour, so that the extra member of
          // a rolling update (maxSurge) does not count; what it has now is the
          // fewest any member sees at its best over 10 minutes, so that the
          // minute a restarted member takes to rejoin does not count either. A
          // cluster scaled down on purpose fires until the hour has passed.
          {
            alert: 'OnchainClusterMembersLost',
            expr: |||
              min without (%(memberLabels)s) (max_over_time(onchain_exporter_cluster_members{%(onchainSelector)s}[10m]))
                <
              max_over_time(min_over_time((max without (%(memberLabels)s) (onchain_exporter_cluster_members{%(onchainSelector)s}))[15m:1m])[1h:1m])
            ||| % cfg,
            'for': '5m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'The onchain_exporter cluster has fewer members than it had.',
              description: 'A member of the onchain_exporter cluster (job {{ $labels.job }}) sees {{ $value }} members, fewer than the cluster had in the last hour: a member has gone and was not replaced, or cannot reach the others. The rest serve every series and fetch its units; a member cut off spends only its share of the daily budget.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainClusterMembersLost'),
            },
          },
          // A fallback is a unit fetched by a member because its owner's row
          // did not come within rank × --cluster.peer-timeout. One owner gone
          // (a crash, a rolling update) costs a few, for minutes; fallbacks in
          // every quarter-hour for 30 minutes mean members that do not hear
          // each other, or a member nobody scrapes, and calls paid twice.
          {
            alert: 'OnchainClusterFallbackRefreshes',
            expr: |||
              sum by (%(groupLabels)s, api) (increase(onchain_exporter_cluster_refreshes_total{%(onchainSelector)s, role="fallback"}[%(rateInterval)s])) > 0
            ||| % cfg,
            'for': '30m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'Members of the onchain_exporter cluster fetch rows their owners should send.',
              description: "For 30 minutes members of the onchain_exporter cluster (job {{ $labels.job }}) have kept fetching {{ $labels.api }} API rows in their owners' place ({{ $value | humanize }} in the last 15 minutes): the owners' rows do not reach them, so these calls are paid twice.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainClusterFallbackRefreshes'),
            },
          },
          // A member's offset is its clock less the cluster's, which is the
          // provider's: the Date of the member's own answers
          // (cluster/heartbeat.go, upstream/dateclock.go). Each member
          // measures its own, so the one whose clock is off reports its
          // skew and the others about 0, whatever the cluster's size: in a
          // pair too, the member that is wrong is the one named. (Before its
          // first answer a member falls back on the median of the members'
          // clocks.) Off by more than the bound, a member refuses rows it
          // takes for the future or the past and counts another UTC day
          // near midnight: NTP keeps members within a second.
          {
            alert: 'OnchainClusterClockSkew',
            expr: |||
              abs(onchain_exporter_cluster_clock_offset_seconds{%(onchainSelector)s}) > %(clusterClockOffsetSeconds)s
            ||| % cfg,
            'for': '5m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: "A member's clock is off the onchain_exporter cluster's.",
              description: "The clock of {{ $labels.instance }} (job {{ $labels.job }}) is {{ $value | humanize }}s off the cluster's, which is the provider's as the Date of its answers says it. Rows it takes for future or past are refused, and the budget's day turns at another time on it.",
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainClusterClockSkew'),
            },
          },
        ],
      },
      {
        name: 'onchain-data-freshness',
        rules: [
          // Thresholds are the provider's own healthy/broken limits per window:
          // day 2 d / 3 d, hour 3 h / 6 h, min, 10min and block 1 h / 3 h. A row's
          // time is the start of its interval and the row appears after the
          // interval ends, so age counts from the interval's end: a day row is
          // a day old when it is published, and counting from its start would
          // cross 2 d every night until the next row is out.
          // Indicator and Analyst Consensus series carry no window: their
          // own alerts follow. A data series whose rows have no time at all
          // (no time key in the payload) has no
          // onchain_data_timestamp_seconds: how recent its values are is
          // onchain_exporter_last_success_timestamp_seconds, and
          // OnchainQueryFailing fires when its refreshes fail. A series the
          // upstream marks deprecated (onchain_exporter_query_deprecated) is
          // not updated any more by design: OnchainSeriesDeprecated says so
          // once, at info, and it is left out here so that it does not page
          // for ever; so is a series the key's plan refuses
          // (OnchainQueryRefusedByPlan), whose newest row stays as it was.
          // In a cluster, a series' newest row is the newest any member
          // serves.
          {
            alert: 'OnchainDataStale',
            expr: |||
              (
                  (time() - 86400 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="day"})) > 2 * 86400
                or
                  (time() - 3600 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="hour"})) > 3 * 3600
                or
                  (time() - 600 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="10min"})) > 3600
                or
                  (time() - 60 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="min"})) > 3600
                or
                  (time() - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="block"})) > 3600
              )
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_deprecated{%(onchainSelector)s}) == 1
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'The newest row of a series is older than the provider considers healthy.',
              description: 'The newest row of {{ $labels.endpoint }} for asset "{{ $labels.asset }}", window "{{ $labels.window }}" (job {{ $labels.job }}) covers an interval that ended {{ $value | humanizeDuration }} ago, beyond what the provider considers healthy for this window.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainDataStale'),
            },
          },
          {
            alert: 'OnchainDataStale',
            expr: |||
              (
                  (time() - 86400 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="day"})) > 3 * 86400
                or
                  (time() - 3600 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="hour"})) > 6 * 3600
                or
                  (time() - 600 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="10min"})) > 3 * 3600
                or
                  (time() - 60 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="min"})) > 3 * 3600
                or
                  (time() - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, window="block"})) > 3 * 3600
              )
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_deprecated{%(onchainSelector)s}) == 1
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'critical',
            },
            annotations: {
              summary: 'The newest row of a series is older than the provider considers broken.',
              description: 'The newest row of {{ $labels.endpoint }} for asset "{{ $labels.asset }}", window "{{ $labels.window }}" (job {{ $labels.job }}) covers an interval that ended {{ $value | humanizeDuration }} ago; the provider considers data this old broken.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainDataStale'),
            },
          },
          // The Indicator and Analyst Consensus APIs' series have no window.
          // Their values are as old as their newest row's day, counted from
          // its end as a day row's; an answer without times (--fake.timeless,
          // a dialect without dates) has no onchain_data_timestamp_seconds,
          // and its values are as old as its last refresh: the schedule asks
          // such a series again at least every max_staleness while nothing
          // changes, so two days without a refresh are no cadence. A price-to-
          // book band has a row per trading day of its exchange: weekends and
          // holidays have none, and an exchange's longest closures with their
          // weekends (KRX's Chuseok, up to a week) stay under eight days. A
          // consensus has a row per UTC day, as a day window has, and the
          // data API's day bound. Deprecated and refused series are left out
          // as in OnchainDataStale.
          {
            alert: 'OnchainIndicatorDataStale',
            expr: |||
              (
                  (time() - 86400 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, api="indicator"})) > 8 * 86400
                or
                  (
                      (time() - max without (%(memberLabels)s) (onchain_exporter_last_success_timestamp_seconds{%(onchainSelector)s, api="indicator"})) > 2 * 86400
                    unless
                      max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, api="indicator"})
                  )
              )
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_deprecated{%(onchainSelector)s}) == 1
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1
            ||| % cfg,
            'for': '1h',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'An Indicator API series has had no new row for longer than an exchange closes.',
              description: 'The values of {{ $labels.endpoint }} (job {{ $labels.job }}) are {{ $value | humanizeDuration }} old, counted from the end of their trading day (or, for an answer without dates, from their last refresh): longer than any weekend with its holidays.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainIndicatorDataStale'),
            },
          },
          {
            alert: 'OnchainConsensusDataStale',
            expr: |||
              (
                  (time() - 86400 - max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, api="consensus"})) > 2 * 86400
                or
                  (
                      (time() - max without (%(memberLabels)s) (onchain_exporter_last_success_timestamp_seconds{%(onchainSelector)s, api="consensus"})) > 2 * 86400
                    unless
                      max without (%(memberLabels)s) (onchain_data_timestamp_seconds{%(onchainSelector)s, api="consensus"})
                  )
              )
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_deprecated{%(onchainSelector)s}) == 1
              unless
                max without (%(memberLabels)s) (onchain_exporter_query_refused{%(onchainSelector)s}) == 1
            ||| % cfg,
            'for': '15m',
            labels: {
              severity: 'warning',
            },
            annotations: {
              summary: 'An Analyst Consensus API series has had no new row for days.',
              description: 'The values of {{ $labels.endpoint }}{{ with $labels.asset }} for asset "{{ . }}"{{ end }}{{ with $labels.handle }} for analyst "{{ . }}"{{ end }} (job {{ $labels.job }}) are {{ $value | humanizeDuration }} old, counted from the end of their UTC day (or, for an answer without dates, from their last refresh); a consensus has a row a day.',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainConsensusDataStale'),
            },
          },
        ],
      },
      // Market signals, not faults of the exporter: severity info and
      // category market, for a route of their own.
      {
        name: 'onchain-market-signals',
        rules: [
          {
            alert: 'OnchainConsensusFlipped',
            expr: |||
              max without (%(memberLabels)s) (onchain_consensus_score{%(onchainSelector)s})
                and
              sgn(max without (%(memberLabels)s) (onchain_consensus_score{%(onchainSelector)s})) != sgn(max without (%(memberLabels)s) (onchain_consensus_score{%(onchainSelector)s} offset 24h))
                and
              abs(max without (%(memberLabels)s) (onchain_consensus_score{%(onchainSelector)s})) >= %(consensusFlipMin)s
                and
              abs(max without (%(memberLabels)s) (onchain_consensus_score{%(onchainSelector)s} offset 24h)) >= %(consensusFlipMin)s
            ||| % cfg,
            'for': '30m',
            labels: {
              severity: 'info',
              category: 'market',
            },
            annotations: {
              summary: 'Analyst consensus flipped sign.',
              description: 'The analyst consensus score of {{ $labels.asset }} (days "{{ $labels.days }}") changed sign within 24 hours and is now {{ $value | printf "%.2f" }} (-1 bearish .. 1 bullish).',
              runbook_url: $._config.runbookURLPattern % std.asciiLower('OnchainConsensusFlipped'),
            },
          },
        ],
      },
    ],
  },
}
