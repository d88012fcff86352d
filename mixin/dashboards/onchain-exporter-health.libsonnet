// The onchain_exporter health dashboard. mixin/dashboards/dashboards.libsonnet
// applies the conventions (selectors, variables, uid, __inputs).
{
  annotations: {
    list: [
      {
        builtIn: 1,
        datasource: {
          type: 'grafana',
          uid: '-- Grafana --',
        },
        enable: true,
        hide: true,
        iconColor: 'rgba(0, 211, 255, 1)',
        name: 'Annotations & Alerts',
        type: 'dashboard',
      },
    ],
  },
  description: 'Upstream requests and errors, cache, rate-limit and quota headroom, and data age of onchain_exporter.',
  fiscalYearStartMonth: 0,
  graphTooltip: 1,
  links: [
    {
      type: 'dashboards',
      tags: [
        'onchain_exporter',
      ],
      asDropdown: true,
      title: 'onchain_exporter',
      includeVars: true,
      keepTime: true,
    },
  ],
  panels: [
    {
      type: 'stat',
      title: 'Targets up',
      id: 1,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 4,
        x: 0,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'red',
                value: null,
              },
              {
                color: 'green',
                value: 1,
              },
            ],
          },
          color: {
            mode: 'thresholds',
          },
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum(up{job=~"$job", instance=~"$instance"}) / count(up{job=~"$job", instance=~"$instance"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
        },
      ],
      description: 'Share of the selected scrape targets Prometheus reached at its last scrape (1 is every target); OnchainExporterMemberDown fires for a target down 5 minutes while another of its job is up, OnchainExporterDown when none is.',
    },
    {
      type: 'stat',
      title: 'Series configured',
      id: 2,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 4,
        x: 4,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum(max without (instance, pod) (onchain_exporter_tuples{job=~"$job", instance=~"$instance", api=~"$api"}))',
          legendFormat: '__auto',
          range: false,
          instant: true,
        },
      ],
      description: 'Series (tuples) the configuration in force asks for, counted once across the members of a cluster.',
    },
    {
      type: 'stat',
      title: 'Series failing',
      id: 3,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 4,
        x: 8,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'green',
                value: null,
              },
              {
                color: 'red',
                value: 1,
              },
            ],
          },
          color: {
            mode: 'thresholds',
          },
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum(1 - min without (instance, pod) (onchain_exporter_query_success{job=~"$job", instance=~"$instance", api=~"$api"}))',
          legendFormat: '__auto',
          range: false,
          instant: true,
        },
      ],
      description: 'Series whose last refresh failed on any member; OnchainQueryFailing fires after 30 minutes.',
    },
    {
      type: 'stat',
      title: 'APIs paused',
      id: 4,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 4,
        x: 12,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'green',
                value: null,
              },
              {
                color: 'red',
                value: 1,
              },
            ],
          },
          color: {
            mode: 'thresholds',
          },
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum(onchain_exporter_api_paused{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
        },
      ],
      description: 'The exporter stops calling an API after a rejected key (30 min or until reload), a 429 (Retry-After) or a used daily quota (until 00:00 UTC).',
    },
    {
      type: 'stat',
      title: 'Calls per new row',
      id: 5,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 4,
        x: 16,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'none',
          decimals: 2,
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum(rate(onchain_exporter_upstream_requests_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval])) / sum(rate(onchain_exporter_row_delay_seconds_count{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: '__auto',
          range: false,
          instant: true,
        },
      ],
      description: 'Upstream calls per new row served of the series with a window (row_delay_seconds counts each row once, when first served): about 1 when every row costs one call; listing, plan and windowless calls count above it.',
    },
    {
      type: 'stat',
      title: 'Last config reload',
      id: 6,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 4,
        x: 20,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'red',
                value: null,
              },
              {
                color: 'green',
                value: 1,
              },
            ],
          },
          color: {
            mode: 'thresholds',
          },
          mappings: [
            {
              type: 'value',
              options: {
                '0': {
                  text: 'failed',
                },
                '1': {
                  text: 'ok',
                },
              },
            },
          ],
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'min(onchain_exporter_config_last_reload_successful{job=~"$job", instance=~"$instance"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
        },
      ],
      description: '1 when the last configuration reload of every selected instance succeeded, 0 when one failed and the old configuration stays in force.',
    },
    {
      type: 'row',
      title: 'Upstream requests',
      id: 7,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 4,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Requests by API and status',
      id: 8,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 5,
      },
      fieldConfig: {
        defaults: {
          unit: 'reqps',
          custom: {
            drawStyle: 'bars',
            fillOpacity: 60,
            stacking: {
              mode: 'normal',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api, code) (rate(onchain_exporter_upstream_requests_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: '{{api}} {{code}}',
          range: true,
          instant: false,
        },
      ],
      description: "Upstream requests per second, by API and HTTP status (or transport error), each member's own calls summed.",
    },
    {
      type: 'timeseries',
      title: 'Request duration',
      id: 9,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 5,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'histogram_quantile(0.95, sum by (api, le) (rate(onchain_exporter_upstream_request_duration_seconds_bucket{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval])))',
          legendFormat: 'p95 {{api}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'histogram_quantile(0.5, sum by (api, le) (rate(onchain_exporter_upstream_request_duration_seconds_bucket{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval])))',
          legendFormat: 'p50 {{api}}',
          range: true,
          instant: false,
        },
        {
          refId: 'C',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api) (rate(onchain_exporter_upstream_request_duration_seconds_sum{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval])) / sum by (api) (rate(onchain_exporter_upstream_request_duration_seconds_count{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: 'mean {{api}}',
          range: true,
          instant: false,
        },
      ],
      description: '95th and 50th percentiles of upstream request duration, by API.',
    },
    {
      type: 'timeseries',
      title: 'Errors by code',
      id: 10,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 13,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          custom: {
            drawStyle: 'bars',
            fillOpacity: 60,
            stacking: {
              mode: 'normal',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api, code) (increase(onchain_exporter_api_errors_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: '{{api}} {{code}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Upstream status words (unauthorized, too_many_requests...), consensus codes (INVALID_API_KEY, PLAN_REQUIRED...) and exporter-side kinds (timeout, transport, decode).',
    },
    {
      type: 'timeseries',
      title: 'Error ratio',
      id: 11,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 13,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
          min: 0,
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'green',
                value: null,
              },
              {
                color: 'red',
                value: 0.1,
              },
            ],
          },
          custom: {
            thresholdsStyle: {
              mode: 'line+area',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api) (rate(onchain_exporter_upstream_requests_total{job=~"$job", instance=~"$instance", api=~"$api", code!~"2.."}[$__rate_interval])) / sum by (api) (rate(onchain_exporter_upstream_requests_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: '{{api}}',
          range: true,
          instant: false,
        },
      ],
      description: 'OnchainUpstreamErrorRatioHigh fires above 10 % for 15 minutes.',
    },
    {
      type: 'timeseries',
      title: 'API paused',
      id: 12,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 21,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          custom: {
            drawStyle: 'bars',
            fillOpacity: 60,
            stacking: {
              mode: 'normal',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_api_paused{job=~"$job", instance=~"$instance", api=~"$api"}',
          legendFormat: '{{api}} by {{code}}',
          range: true,
          instant: false,
        },
      ],
      description: '1 while the exporter holds every call of an API, by the code that paused it: a 401/403 (30 minutes or until a reload), a 429 (Retry-After) or the daily limit (until 00:00 UTC).',
    },
    {
      type: 'timeseries',
      title: 'Stale values served',
      id: 13,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 21,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          custom: {
            drawStyle: 'bars',
            fillOpacity: 60,
            stacking: {
              mode: 'normal',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api) (increase(onchain_exporter_stale_values_served_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: '{{api}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Reads answered with the last good value because the refresh failed or did not finish within the scrape deadline.',
    },
    {
      type: 'row',
      title: 'Calls and rows',
      id: 14,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 29,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'New rows and calls',
      id: 15,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 30,
      },
      fieldConfig: {
        defaults: {
          unit: 'ops',
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api) (rate(onchain_exporter_row_delay_seconds_count{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: 'new rows {{api}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sum by (api) (rate(onchain_exporter_upstream_requests_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval]))',
          legendFormat: 'calls {{api}}',
          range: true,
          instant: false,
        },
      ],
      description: 'New rows served (series with a window) against upstream calls made, per second: the calls follow the rows, not the scrapes.',
    },
    {
      type: 'timeseries',
      title: 'Excess staleness',
      id: 16,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 30,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
          custom: {
            drawStyle: 'line',
            fillOpacity: 10,
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max by (api, window) (onchain_exporter_excess_staleness_seconds{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{api}} {{window}}',
          range: true,
          instant: false,
        },
      ],
      description: 'How far the rows served are behind the newest rows the upstream has published by the learned delay, per window (0: every series serves its newest row). Economy never trades this away unseen: calls per row beside it.',
    },
    {
      type: 'row',
      title: 'Rate-limit and quota headroom',
      id: 17,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 38,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Rate-limit headroom',
      id: 18,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 0,
        y: 39,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
          min: 0,
          max: 1,
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'red',
                value: null,
              },
              {
                color: 'transparent',
                value: 0.1,
              },
            ],
          },
          custom: {
            thresholdsStyle: {
              mode: 'line+area',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_ratelimit_remaining{job=~"$job", instance=~"$instance", api=~"$api"} / (onchain_exporter_ratelimit_limit{job=~"$job", instance=~"$instance", api=~"$api"} > 0)',
          legendFormat: '{{api}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Requests left in the current minute over the requests allowed, from the X-RateLimit headers.',
    },
    {
      type: 'timeseries',
      title: 'Rate limit and reset',
      id: 19,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 8,
        y: 39,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_ratelimit_limit{job=~"$job", instance=~"$instance", api=~"$api"}',
          legendFormat: 'limit {{api}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_ratelimit_reset_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api"} - time()',
          legendFormat: 'reset in (s) {{api}}',
          range: true,
          instant: false,
        },
      ],
      description: "The upstream's per-minute request limit and the seconds until its window resets, as its rate-limit headers report them.",
    },
    {
      type: 'timeseries',
      title: 'Daily quota used',
      id: 20,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 16,
        y: 39,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
          min: 0,
          max: 1,
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'green',
                value: null,
              },
              {
                color: 'red',
                value: 0.9,
              },
            ],
          },
          custom: {
            thresholdsStyle: {
              mode: 'line+area',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_daily_quota_used{job=~"$job", instance=~"$instance", api=~"$api"} / (onchain_exporter_daily_quota_limit{job=~"$job", instance=~"$instance", api=~"$api"} > 0)',
          legendFormat: '{{api}}',
          range: true,
          instant: false,
        },
      ],
      description: 'OnchainDailyQuotaNearlyUsed fires above 90 %; the quota resets at 00:00 UTC.',
    },
    {
      type: 'row',
      title: 'Data age',
      id: 21,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 47,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Age of the newest row',
      id: 22,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 48,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'time() - max without (instance, pod) (onchain_data_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{endpoint}} {{asset}}{{exchange}}{{token}}{{equity}} {{window}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Row times are interval starts: a day row is at least a day old when it is published.',
    },
    {
      type: 'timeseries',
      title: 'Age relative to the warning threshold',
      id: 23,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 48,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'green',
                value: null,
              },
              {
                color: 'orange',
                value: 1,
              },
              {
                color: 'red',
                value: 1.5,
              },
            ],
          },
          custom: {
            thresholdsStyle: {
              mode: 'line+area',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: '((time() - 86400 - max without (instance, pod) (onchain_data_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api", window="day"})) / (2 * 86400) or (time() - 3600 - max without (instance, pod) (onchain_data_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api", window="hour"})) / (3 * 3600) or (time() - 600 - max without (instance, pod) (onchain_data_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api", window="10min"})) / 3600 or (time() - 60 - max without (instance, pod) (onchain_data_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api", window="min"})) / 3600 or (time() - max without (instance, pod) (onchain_data_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api", window="block"})) / 3600) unless max without (instance, pod) (onchain_exporter_query_deprecated{job=~"$job", instance=~"$instance", api=~"$api"}) == 1',
          legendFormat: '{{endpoint}} {{asset}}{{exchange}}{{token}} {{window}}',
          range: true,
          instant: false,
        },
      ],
      description: "Time since the newest row's interval ended, over OnchainDataStale's warning level for the window (day 2 d, hour 3 h, min/10min/block 1 h): 1 (100 %) is the warning level; 1.5 is the critical level for day and hour, 3 for the others. Series the upstream marks deprecated are left out, as the alert leaves them out.",
    },
    {
      type: 'table',
      title: 'Series by time since their last successful refresh',
      id: 24,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 24,
        x: 0,
        y: 56,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
        },
        overrides: [],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: {
          show: false,
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'sort_desc(time() - max without (instance, pod) (onchain_exporter_last_success_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api"}))',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'organize',
          options: {
            excludeByName: {
              Time: true,
              job: true,
            },
            renameByName: {
              Value: 'seconds since success',
            },
          },
        },
      ],
      description: 'Every series with the time since its last successful refresh on any member, oldest first.',
    },
    {
      type: 'row',
      title: 'Collectors and process',
      id: 25,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 64,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Scrape duration per collector',
      id: 26,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 0,
        y: 65,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_scrape_collector_duration_seconds{job=~"$job", instance=~"$instance"}',
          legendFormat: '{{collector}} ({{job}})',
          range: true,
          instant: false,
        },
      ],
      description: 'How long each collector took to answer a scrape; a scrape reads the cache and never waits for upstream.',
    },
    {
      type: 'timeseries',
      title: 'Collector success',
      id: 27,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 8,
        y: 65,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          min: 0,
          max: 1,
          custom: {
            lineInterpolation: 'stepAfter',
            fillOpacity: 10,
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_scrape_collector_success{job=~"$job", instance=~"$instance"}',
          legendFormat: '{{collector}} ({{job}})',
          range: true,
          instant: false,
        },
      ],
      description: '0 when some series of the collector came from a failed or unfinished refresh in that scrape.',
    },
    {
      type: 'timeseries',
      title: 'Exporter memory',
      id: 28,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 16,
        y: 65,
      },
      fieldConfig: {
        defaults: {
          unit: 'bytes',
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'process_resident_memory_bytes{job=~"$job", instance=~"$instance"}',
          legendFormat: '{{instance}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Resident memory of each exporter process.',
    },
    {
      type: 'table',
      title: 'Deprecated series',
      id: 29,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 0,
        y: 73,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
        },
        overrides: [],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: {
          show: false,
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_exporter_query_deprecated{job=~"$job", instance=~"$instance", api=~"$api"}) == 1',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'organize',
          options: {
            excludeByName: {
              Time: true,
              Value: true,
            },
          },
        },
      ],
      description: 'Series the upstream marks as deprecated: they may no longer update (OnchainSeriesDeprecated).',
    },
    {
      type: 'table',
      title: 'Build',
      id: 30,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 8,
        y: 73,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
        },
        overrides: [],
      },
      options: {
        showHeader: true,
        cellHeight: 'sm',
        footer: {
          show: false,
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_build_info{job=~"$job", instance=~"$instance"}',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'organize',
          options: {
            excludeByName: {
              Time: true,
              Value: true,
              __name__: true,
            },
          },
        },
      ],
      description: 'Version, revision and Go version of each exporter process.',
    },
    {
      type: 'stat',
      title: 'Configuration loaded',
      id: 31,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 16,
        y: 73,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'time() - max by (instance) (onchain_exporter_config_last_reload_success_timestamp_seconds{job=~"$job", instance=~"$instance"})',
          legendFormat: '{{instance}}',
          range: false,
          instant: true,
        },
      ],
      description: 'Time since the last successful load or reload of the configuration.',
    },
    {
      type: 'row',
      title: "Expansion through the upstream's lists",
      id: 32,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 81,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Expansion success',
      id: 33,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 0,
        y: 82,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          min: 0,
          max: 1,
          custom: {
            lineInterpolation: 'stepAfter',
            fillOpacity: 10,
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_expansion_success{job=~"$job", instance=~"$instance", api=~"$api"}',
          legendFormat: '{{api}} ({{instance}})',
          range: true,
          instant: false,
        },
      ],
      description: "1 when the last expansion read every listing endpoint the API's entries need (all, consensus asset names); 0 while it fails and the exporter retries (5 s doubling to 1 min).",
    },
    {
      type: 'timeseries',
      title: 'Entries waiting for their lists',
      id: 34,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 8,
        y: 82,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          min: 0,
          custom: {
            lineInterpolation: 'stepAfter',
            fillOpacity: 10,
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'onchain_exporter_expansion_entries_waiting{job=~"$job", instance=~"$instance", api=~"$api"}',
          legendFormat: '{{api}} ({{instance}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Entries left out of the configuration in force: their listing endpoint has not answered since start (or since they were added), or its answer shows the file wrong (an unknown asset).',
    },
    {
      type: 'stat',
      title: 'Time since the last expansion',
      id: 35,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 16,
        y: 82,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
        },
        overrides: [],
      },
      options: {
        reduceOptions: {
          calcs: [
            'lastNotNull',
          ],
          fields: '',
          values: false,
        },
        colorMode: 'value',
        graphMode: 'area',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'time() - onchain_exporter_expansion_last_success_timestamp_seconds{job=~"$job", instance=~"$instance", api=~"$api"}',
          legendFormat: '{{api}} ({{instance}})',
          range: false,
          instant: true,
        },
      ],
      description: "Time since each API's entries were last expanded from its listing endpoints; expansion runs at start, on reload and daily, and retries while it fails.",
    },
    {
      type: 'row',
      title: 'Freshness: how late rows are served against how late they could be',
      id: 36,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 90,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Learned publication delay',
      id: 37,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 91,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'max by (api, endpoint, window) (onchain_exporter_publication_delay_seconds{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{api}} {{endpoint}} {{window}}',
        },
      ],
      description: "Delay between the end of a row's interval and its publication upstream, as the exporter learned it per endpoint and window. The first poll for a new row goes there.",
    },
    {
      type: 'timeseries',
      title: 'Row delay served vs learned publication delay (last day)',
      id: 38,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 91,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'histogram_quantile(0.5, sum by (api, window, le) (increase(onchain_exporter_row_delay_seconds_bucket{job=~"$job", instance=~"$instance", api=~"$api"}[1d])))',
          legendFormat: 'p50 {{api}} {{window}}',
        },
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'B',
          expr: 'histogram_quantile(0.9, sum by (api, window, le) (increase(onchain_exporter_row_delay_seconds_bucket{job=~"$job", instance=~"$instance", api=~"$api"}[1d])))',
          legendFormat: 'p90 {{api}} {{window}}',
        },
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'C',
          expr: 'min by (api, window) (onchain_exporter_publication_delay_seconds{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: 'learned publication delay {{api}} {{window}}',
        },
      ],
      description: 'How long after its interval ended each new row was served (p50, p90 of the rows of the last day: day rows come once a day), against the delay the exporter learned. The gap is how long after the estimate rows were found; an estimate that is itself too late shows in the excess staleness panel below.',
    },
    {
      type: 'timeseries',
      title: 'Excess staleness: how far behind the newest published row (mean over 1 h)',
      id: 39,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 24,
        x: 0,
        y: 99,
      },
      fieldConfig: {
        defaults: {
          unit: 's',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'avg by (api, window) (avg_over_time(onchain_exporter_excess_staleness_seconds{job=~"$job", instance=~"$instance", api=~"$api"}[1h]))',
          legendFormat: '{{api}} {{window}}',
        },
      ],
      description: "At each scrape, how far the rows served are behind the newest rows the upstream has published by the learned delay (its lower bound where known), averaged over the last hour: 0 means every series serves the newest row. The benchmark's target is a tenth of the window (15 min for day rows).",
    },
    {
      type: 'row',
      title: 'Cost: calls per endpoint and the daily budget',
      id: 40,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 107,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Upstream calls per endpoint (a day, at the current rate)',
      id: 41,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 108,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'sum by (api, endpoint) (rate(onchain_exporter_upstream_requests_total{job=~"$job", instance=~"$instance", api=~"$api"}[$__rate_interval])) * 86400',
          legendFormat: '{{api}} {{endpoint}}',
        },
      ],
      description: 'Requests on the wire per configured endpoint (the path as written in the file, or the listing path), retries included, as calls a day at the current rate: what each entry costs. Compare with the forecast below.',
    },
    {
      type: 'timeseries',
      title: 'Calls used today vs daily budget',
      id: 42,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 108,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'max without (instance, pod) (onchain_exporter_daily_calls_used{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{api}} used',
        },
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'B',
          expr: 'max without (instance, pod) (onchain_exporter_daily_budget_calls{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{api}} budget',
        },
      ],
      description: "Calls counted on the current UTC day (reset at 00:00 UTC) against the budget in force: daily_budget, or the upstream's X-Daily-Limit when lower. Paced, the used line climbs evenly to the budget by the day's end; OnchainDailyBudgetRunsOutEarly fires when it would reach it more than an hour early.",
    },
    {
      type: 'timeseries',
      title: 'Forecast vs daily budget',
      id: 43,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 116,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'sum by (api) (max without (instance, pod) (onchain_exporter_forecast_calls_per_day{job=~"$job", instance=~"$instance", api=~"$api"}))',
          legendFormat: '{{api}} forecast',
        },
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'B',
          expr: 'max without (instance, pod) (onchain_exporter_daily_budget_calls{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{api}} budget',
        },
      ],
      description: 'Calls a day the configuration in force costs (after expansion, before any cut) against the budget. Above it, the exporter polls the finest windows less often (coarsening factor) and OnchainForecastExceedsBudget fires; --config.check shows the cost of each entry.',
    },
    {
      type: 'timeseries',
      title: 'Coarsening factor by window',
      id: 44,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 116,
      },
      fieldConfig: {
        defaults: {
          unit: 'none',
          custom: {
            drawStyle: 'line',
            lineWidth: 1,
            fillOpacity: 0,
            showPoints: 'never',
            stacking: {
              mode: 'none',
              group: 'A',
            },
          },
          min: 1,
          decimals: 0,
        },
        overrides: [],
      },
      options: {
        legend: {
          displayMode: 'list',
          placement: 'bottom',
          showLegend: true,
        },
        tooltip: {
          mode: 'multi',
          sort: 'desc',
        },
      },
      targets: [
        {
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          refId: 'A',
          expr: 'max by (api, window) (onchain_exporter_coarsening_factor{job=~"$job", instance=~"$instance", api=~"$api"})',
          legendFormat: '{{api}} {{window}}',
        },
      ],
      description: "Rows of its window per poll under the daily budget's plan: 1 polls every row, 4 every fourth. The finest windows are cut first.",
    },
  ],
  refresh: '1m',
  schemaVersion: 39,
  tags: [
    'onchain_exporter',
    'exporter',
  ],
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
      {
        name: 'job',
        label: 'Job',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_exporter_query_success, job)',
        definition: 'label_values(onchain_exporter_query_success, job)',
        refresh: 2,
        sort: 1,
        hide: 0,
        regex: '',
        options: [],
        current: {},
        multi: true,
        includeAll: true,
        allValue: '.*',
      },
      {
        name: 'instance',
        label: 'Instance',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_exporter_query_success{job=~"$job"}, instance)',
        definition: 'label_values(onchain_exporter_query_success{job=~"$job"}, instance)',
        refresh: 2,
        sort: 1,
        hide: 0,
        regex: '',
        options: [],
        current: {},
        multi: true,
        includeAll: true,
        allValue: '.*',
      },
      {
        name: 'api',
        label: 'API',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_exporter_query_success{job=~"$job", instance=~"$instance"}, api)',
        definition: 'label_values(onchain_exporter_query_success{job=~"$job", instance=~"$instance"}, api)',
        refresh: 2,
        sort: 1,
        hide: 0,
        regex: '',
        options: [],
        current: {},
        multi: true,
        includeAll: true,
        allValue: '.*',
      },
    ],
  },
  time: {
    from: 'now-7d',
    to: 'now',
  },
  timepicker: {},
  timezone: 'utc',
  title: 'onchain_exporter health',
  uid: 'onchain-exporter-health',
  version: 1,
  weekStart: '',
}
