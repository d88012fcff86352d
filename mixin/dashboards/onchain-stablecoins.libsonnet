// The On-chain stablecoins dashboard. mixin/dashboards/dashboards.libsonnet
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
  description: "Stablecoin supply events by kind (transfer, mint, issue, burn, redeem) from the data API's v2 events-count (onchain_exporter).",
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
      title: 'Mint events (latest $window)',
      id: 1,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 6,
        x: 0,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          color: {
            mode: 'fixed',
            fixedColor: 'green',
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
          expr: 'sum(max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind="mint"}[1d])))',
          legendFormat: 'mint',
          range: false,
          instant: true,
        },
      ],
      description: 'Mint events of the selected stablecoins in the latest window, summed.',
    },
    {
      type: 'stat',
      title: 'Issue events (latest $window)',
      id: 2,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 6,
        x: 6,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          color: {
            mode: 'fixed',
            fixedColor: 'blue',
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
          expr: 'sum(max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind="issue"}[1d])))',
          legendFormat: 'issue',
          range: false,
          instant: true,
        },
      ],
      description: 'Issue events of the selected stablecoins in the latest window, summed.',
    },
    {
      type: 'stat',
      title: 'Burn events (latest $window)',
      id: 3,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 6,
        x: 12,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          color: {
            mode: 'fixed',
            fixedColor: 'red',
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
          expr: 'sum(max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind="burn"}[1d])))',
          legendFormat: 'burn',
          range: false,
          instant: true,
        },
      ],
      description: 'Burn events of the selected stablecoins in the latest window, summed.',
    },
    {
      type: 'stat',
      title: 'Redeem events (latest $window)',
      id: 4,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 4,
        w: 6,
        x: 18,
        y: 0,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          color: {
            mode: 'fixed',
            fixedColor: 'orange',
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
          expr: 'sum(max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind="redeem"}[1d])))',
          legendFormat: 'redeem',
          range: false,
          instant: true,
        },
      ],
      description: 'Redeem events of the selected stablecoins in the latest window, summed.',
    },
    {
      type: 'timeseries',
      title: 'Events by kind',
      id: 5,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 9,
        w: 24,
        x: 0,
        y: 4,
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
          expr: 'sum by (kind) (max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window"}[1d])))',
          legendFormat: '{{kind}}',
          range: true,
          instant: false,
        },
      ],
      description: 'All selected stablecoins together, per $window.',
    },
    {
      type: 'timeseries',
      title: 'Mint and burn per stablecoin',
      id: 6,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind=~"mint|burn"}[1d]))',
          legendFormat: '{{asset}} {{kind}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Mint and burn events per stablecoin and window: supply created and destroyed.',
    },
    {
      type: 'timeseries',
      title: 'Issue and redeem per stablecoin',
      id: 7,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind=~"issue|redeem"}[1d]))',
          legendFormat: '{{asset}} {{kind}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Issue and redeem events per stablecoin and window.',
    },
    {
      type: 'timeseries',
      title: 'Transfers per stablecoin',
      id: 8,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind="transfer"}[1d]))',
          legendFormat: '{{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Transfer events per stablecoin and window.',
    },
    {
      type: 'timeseries',
      title: 'Supply-increasing minus supply-decreasing events',
      id: 9,
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
          expr: 'sum by (asset) (max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind=~"mint|issue"}[1d]))) - sum by (asset) (max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind=~"burn|redeem"}[1d])))',
          legendFormat: '{{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Mint + issue - burn - redeem per window: above zero the supply is being expanded.',
    },
    {
      type: 'timeseries',
      title: 'Mint and burn vs their 7-day average',
      id: 10,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 29,
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
                value: 3,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind=~"mint|burn"}[1d])) / (max without (instance, pod) (avg_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window", kind=~"mint|burn"}[7d])) > 0)',
          legendFormat: '{{asset}} {{kind}}',
          range: true,
          instant: false,
        },
      ],
      description: 'OnchainStablecoinSupplySurge fires above 3 (with at least 10 events).',
    },
    {
      type: 'table',
      title: 'Latest events by stablecoin and kind',
      id: 11,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 29,
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
          expr: 'sum by (asset, kind) (max without (instance, pod) (last_over_time(onchain_stablecoin_events{job=~"$job", asset=~"$asset", window="$window"}[1d])))',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'groupingToMatrix',
          options: {
            columnField: 'kind',
            rowField: 'asset',
            valueField: 'Value',
          },
        },
      ],
      description: "The latest window's events, one row per stablecoin and kind.",
    },
  ],
  refresh: '1m',
  schemaVersion: 39,
  tags: [
    'onchain_exporter',
    'onchain',
    'stablecoins',
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
        query: 'label_values(onchain_stablecoin_events, job)',
        definition: 'label_values(onchain_stablecoin_events, job)',
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
        name: 'asset',
        label: 'Stablecoin',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_stablecoin_events{job=~"$job"}, asset)',
        definition: 'label_values(onchain_stablecoin_events{job=~"$job"}, asset)',
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
        name: 'window',
        label: 'Window',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_stablecoin_events{job=~"$job", asset=~"$asset"}, window)',
        definition: 'label_values(onchain_stablecoin_events{job=~"$job", asset=~"$asset"}, window)',
        refresh: 2,
        sort: 1,
        hide: 0,
        regex: '',
        options: [],
        current: {},
        multi: false,
        includeAll: false,
      },
    ],
  },
  time: {
    from: 'now-7d',
    to: 'now',
  },
  timepicker: {},
  timezone: 'utc',
  title: 'On-chain stablecoins',
  uid: 'onchain-stablecoins',
  version: 1,
  weekStart: '',
}
