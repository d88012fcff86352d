// The Equities and analyst consensus dashboard. mixin/dashboards/dashboards.libsonnet
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
  description: 'Price-to-book bands from the Indicator API and analyst stance from the Analyst Consensus API (onchain_exporter).',
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
      type: 'row',
      title: 'Equities: price-to-book band',
      id: 1,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 0,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: '$equity: close price in its price-to-book band',
      id: 2,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 10,
        w: 24,
        x: 0,
        y: 1,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_pbr_band_price{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: '{{multiple}}x book',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_close_price{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: 'close',
          range: true,
          instant: false,
        },
      ],
      description: 'Band lines are book value per share times a fixed price-to-book multiple; the close moving through them shows the valuation. Equity panels take the last value of the past 4 days, so that trading-day rows (backfilled ones a day apart) draw across weekends and a holiday; a series that stops keeps its last value for 4 days.',
      repeat: 'equity',
      repeatDirection: 'v',
    },
    {
      type: 'timeseries',
      title: 'Price-to-book ratio',
      id: 3,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 11,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_pbr_ratio{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: '{{equity}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Close price divided by book value per share, per equity: the valuation the band above draws as lines.',
    },
    {
      type: 'timeseries',
      title: 'Book value per share',
      id: 4,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 11,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_book_value_per_share{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: '{{equity}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Book value per share as the Indicator API reports it; it moves when a new fiscal period is published.',
    },
    {
      type: 'table',
      title: 'Latest close, book value and PBR',
      id: 5,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 24,
        x: 0,
        y: 19,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_close_price{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_book_value_per_share{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'C',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_equity_pbr_ratio{job=~"$job", equity=~"$equity"}[4d]))',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'merge',
          options: {},
        },
        {
          id: 'organize',
          options: {
            excludeByName: {
              Time: true,
              job: true,
              instance: true,
            },
            renameByName: {
              'Value #A': 'close',
              'Value #B': 'book value per share',
              'Value #C': 'PBR',
            },
          },
        },
      ],
      description: "The latest value of each equity's close price, book value per share and price-to-book ratio, one row per equity.",
    },
    {
      type: 'row',
      title: 'Analyst consensus',
      id: 6,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 27,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Consensus score',
      id: 7,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 28,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          min: -1,
          max: 1,
          custom: {
            lineInterpolation: 'stepAfter',
            fillOpacity: 10,
          },
          decimals: 2,
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
          expr: 'max without (instance, pod) (onchain_consensus_score{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{days}}',
          range: true,
          instant: false,
        },
      ],
      description: '(bullish - bearish) / analysts counted, from -1 to 1. OnchainConsensusFlipped fires when it changes sign within 24 h.',
    },
    {
      type: 'gauge',
      title: 'Consensus score now',
      id: 8,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 28,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          min: -1,
          max: 1,
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'red',
                value: null,
              },
              {
                color: 'yellow',
                value: -0.1,
              },
              {
                color: 'green',
                value: 0.1,
              },
            ],
          },
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
        showThresholdLabels: false,
        showThresholdMarkers: true,
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_consensus_score{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{days}}',
          range: false,
          instant: true,
        },
      ],
      description: 'The analyst consensus score of the selected asset, from -1 (bearish) to 1 (bullish); OnchainConsensusFlipped fires when it changes sign within 24 hours.',
    },
    {
      type: 'timeseries',
      title: 'Analysts by stance',
      id: 9,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 36,
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
        overrides: [
          {
            matcher: {
              id: 'byRegexp',
              options: '.*counted',
            },
            properties: [
              {
                id: 'custom.drawStyle',
                value: 'line',
              },
              {
                id: 'custom.stacking',
                value: {
                  mode: 'none',
                },
              },
            ],
          },
        ],
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
          expr: 'max without (instance, pod) (onchain_consensus_analysts{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{days}} {{stance}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_consensus_analysts_counted{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{days}} counted',
          range: true,
          instant: false,
          hide: false,
        },
      ],
      description: 'How many analysts hold each stance (bullish, neutral, bearish) on the asset, and how many the score counted.',
    },
    {
      type: 'timeseries',
      title: 'Analyst views by stance',
      id: 10,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 36,
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
          expr: 'max without (instance, pod) (onchain_analyst_views{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{stance}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Views published by analysts on the asset, by stance.',
    },
    {
      type: 'timeseries',
      title: 'Analyst calls: long vs short',
      id: 11,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 44,
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
          expr: 'max without (instance, pod) (onchain_analyst_calls{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{direction}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Long and short calls made by analysts on the asset.',
    },
    {
      type: 'bargauge',
      title: "Top analysts' accuracy",
      id: 12,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 44,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
          min: 0,
          max: 1,
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
        displayMode: 'gradient',
        orientation: 'horizontal',
        showUnfilled: true,
      },
      targets: [
        {
          refId: 'A',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_analyst_top_accuracy_ratio{job=~"$job", asset=~"$asset"})',
          legendFormat: '{{asset}} {{handle}}',
          range: false,
          instant: true,
        },
      ],
      description: 'The accuracy of the top-ranked analysts of the asset, as a share of their calls that came true.',
    },
    {
      type: 'table',
      title: 'Top analysts',
      id: 13,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 52,
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
          expr: 'max without (instance, pod) (onchain_analyst_top_rank{job=~"$job", asset=~"$asset"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_analyst_top_accuracy_ratio{job=~"$job", asset=~"$asset"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'C',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_analyst_top_calls{job=~"$job", asset=~"$asset"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'D',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_analyst_top_followers{job=~"$job", asset=~"$asset"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'merge',
          options: {},
        },
        {
          id: 'organize',
          options: {
            excludeByName: {
              Time: true,
              job: true,
              instance: true,
            },
            renameByName: {
              'Value #A': 'rank',
              'Value #B': 'accuracy',
              'Value #C': 'calls',
              'Value #D': 'followers',
            },
          },
        },
      ],
      description: 'The top-ranked analysts of the asset: rank, accuracy and calls recorded.',
    },
    {
      type: 'table',
      title: 'Tracked analysts',
      id: 14,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 52,
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
          expr: 'max without (instance, pod) (onchain_analyst_accuracy_ratio{job=~"$job"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_analyst_recorded_calls{job=~"$job"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
        {
          refId: 'C',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (onchain_analyst_followers{job=~"$job"})',
          legendFormat: '__auto',
          range: false,
          instant: true,
          format: 'table',
        },
      ],
      transformations: [
        {
          id: 'merge',
          options: {},
        },
        {
          id: 'organize',
          options: {
            excludeByName: {
              Time: true,
              job: true,
              instance: true,
            },
            renameByName: {
              'Value #A': 'accuracy',
              'Value #B': 'calls',
              'Value #C': 'followers',
            },
          },
        },
      ],
      description: 'Every analyst the Analyst Consensus API tracks: accuracy, calls recorded and followers.',
    },
  ],
  refresh: '1m',
  schemaVersion: 39,
  tags: [
    'onchain_exporter',
    'equities',
    'consensus',
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
        query: 'label_values(onchain_data_timestamp_seconds{api=~"indicator|consensus"}, job)',
        definition: 'label_values(onchain_data_timestamp_seconds{api=~"indicator|consensus"}, job)',
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
        name: 'equity',
        label: 'Equity',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_equity_pbr_ratio{job=~"$job"}, equity)',
        definition: 'label_values(onchain_equity_pbr_ratio{job=~"$job"}, equity)',
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
        label: 'Asset',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_consensus_score{job=~"$job"}, asset)',
        definition: 'label_values(onchain_consensus_score{job=~"$job"}, asset)',
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
  title: 'Equities and analyst consensus',
  uid: 'onchain-equities-consensus',
  version: 1,
  weekStart: '',
}
