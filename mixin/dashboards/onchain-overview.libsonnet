// The On-chain overview dashboard. mixin/dashboards/dashboards.libsonnet
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
  description: 'Supply, exchange reserves and flows, open interest, network activity and valuation from the blockchain data API (onchain_exporter).',
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
      title: 'MVRV Z-score',
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
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'green',
                value: null,
              },
              {
                color: 'blue',
                value: 0,
              },
              {
                color: 'green',
                value: 3,
              },
              {
                color: 'red',
                value: 7,
              },
            ],
          },
          color: {
            mode: 'thresholds',
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
          expr: 'max without (instance, pod) (last_over_time(onchain_mvrv_z_score{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{asset}}',
          range: false,
          instant: true,
        },
      ],
      description: 'Above 7 marked past cycle tops, below 0 past bottoms (OnchainMVRVZScore* alerts).',
    },
    {
      type: 'stat',
      title: 'Open interest (all exchanges)',
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
          unit: 'currencyUSD',
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
          expr: 'max by (asset, window) (last_over_time(onchain_open_interest_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange="all_exchange", symbol=~"|all_symbol"}[1d])) or sum by (asset, window) (max by (asset, window, exchange) (last_over_time(onchain_open_interest_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange!~"all_.*", symbol=~"|all_symbol"}[1d])) or sum by (asset, window, exchange) (max without (instance, pod) (last_over_time(onchain_open_interest_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange!~"all_.*", symbol!~"all_.*"}[1d]))))',
          legendFormat: '{{asset}} {{window}}',
          range: false,
          instant: true,
        },
      ],
      description: 'The all_exchange aggregate where the file names it (exchange: all leaves it out), else the sum over the exchanges configured; an aggregate is never added to its parts (all_symbol likewise within an exchange).',
    },
    {
      type: 'stat',
      title: 'Exchange reserves (USD)',
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
          unit: 'currencyUSD',
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
          expr: 'sum by (window) (max by (asset, token, window) (last_over_time(onchain_exchange_reserve_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token", exchange="all_exchange"}[1d])) or sum by (asset, token, window) (max without (instance, pod) (last_over_time(onchain_exchange_reserve_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token", exchange!~"all_.*"}[1d]))))',
          legendFormat: '{{window}}',
          range: false,
          instant: true,
        },
      ],
      description: 'Sum over the selected assets and tokens, each counted once: its all_exchange aggregate where the file names it, else the sum over its single exchanges.',
    },
    {
      type: 'stat',
      title: 'Supply',
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
          expr: 'max without (instance, pod) (last_over_time(onchain_supply{job=~"$job", asset=~"$asset", window=~"$window", window="day"}[1d]))',
          legendFormat: '{{asset}}',
          range: false,
          instant: true,
        },
      ],
      description: 'Total supply of the asset, from its newest day row.',
    },
    {
      type: 'row',
      title: 'Supply',
      id: 5,
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
      title: 'Supply',
      id: 6,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_supply{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{asset}} {{window}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Total supply of the asset, from the newest row of the past day.',
    },
    {
      type: 'timeseries',
      title: 'Newly issued per window',
      id: 7,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_supply_new{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{asset}} {{window}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Newly issued supply per window (block reward, minting), per asset.',
    },
    {
      type: 'row',
      title: 'Exchange reserves and flows',
      id: 8,
      collapsed: false,
      gridPos: {
        h: 1,
        w: 24,
        x: 0,
        y: 13,
      },
      panels: [],
    },
    {
      type: 'timeseries',
      title: 'Exchange reserve (token units)',
      id: 9,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 14,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_exchange_reserve{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d]))',
          legendFormat: '{{asset}} {{token}} @ {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: "Holdings of exchange wallets in the asset's own units, per exchange and token.",
    },
    {
      type: 'timeseries',
      title: 'Exchange reserve (USD)',
      id: 10,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 14,
      },
      fieldConfig: {
        defaults: {
          unit: 'currencyUSD',
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
          expr: 'max without (instance, pod) (last_over_time(onchain_exchange_reserve_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d]))',
          legendFormat: '{{asset}} {{token}} @ {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Holdings of exchange wallets valued in USD, per exchange and token.',
    },
    {
      type: 'timeseries',
      title: 'Exchange reserve change over 24 h',
      id: 11,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 22,
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
                color: 'transparent',
                value: -0.05,
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
          expr: '(max without (instance, pod) (last_over_time(onchain_exchange_reserve{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d])) - max without (instance, pod) (last_over_time(onchain_exchange_reserve{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d] offset 24h))) / (max without (instance, pod) (last_over_time(onchain_exchange_reserve{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d] offset 24h)) > 0)',
          legendFormat: '{{asset}} {{token}} @ {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'OnchainExchangeReserveFallingFast fires below -5 %.',
    },
    {
      type: 'timeseries',
      title: 'Exchange netflow',
      id: 12,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 22,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_exchange_netflow{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange"}[1d]))',
          legendFormat: '{{asset}} @ {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Inflow minus outflow of exchange wallets in the window (positive: coins move onto exchanges).',
    },
    {
      type: 'timeseries',
      title: 'Addresses sending to / receiving from exchanges',
      id: 13,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 24,
        x: 0,
        y: 30,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_exchange_inflow_addresses{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d]))',
          legendFormat: 'inflow {{asset}} {{token}} @ {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: '-max without (instance, pod) (last_over_time(onchain_exchange_outflow_addresses{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange", token=~"$token"}[1d]))',
          legendFormat: 'outflow {{asset}} {{token}} @ {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Inflow addresses above the axis, outflow addresses below.',
    },
    {
      type: 'row',
      title: 'Derivatives',
      id: 14,
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
      title: 'Open interest',
      id: 15,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 39,
      },
      fieldConfig: {
        defaults: {
          unit: 'currencyUSD',
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
          expr: 'max without (instance, pod) (last_over_time(onchain_open_interest_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange"}[1d]))',
          legendFormat: '{{asset}} {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Open interest of derivative contracts on the asset in USD, per exchange; OnchainOpenInterestSpike fires at 1.2 times its 24-hour average.',
    },
    {
      type: 'timeseries',
      title: 'Open interest vs its 24 h average',
      id: 16,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 39,
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
                value: 1.2,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_open_interest_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange"}[1d])) / (max without (instance, pod) (avg_over_time(onchain_open_interest_usd{job=~"$job", asset=~"$asset", window=~"$window", exchange=~"$exchange"}[24h])) > 0)',
          legendFormat: '{{asset}} {{exchange}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'OnchainOpenInterestSpike fires above 1.2.',
    },
    {
      type: 'row',
      title: 'Network activity',
      id: 17,
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
      title: 'Active addresses',
      id: 18,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_active_addresses{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'active {{asset}} ({{window}})',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_sender_addresses{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'senders {{asset}} ({{window}})',
          range: true,
          instant: false,
        },
        {
          refId: 'C',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_receiver_addresses{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'receivers {{asset}} ({{window}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Addresses active on the chain per window: senders, receivers and all.',
    },
    {
      type: 'timeseries',
      title: 'Velocity',
      id: 19,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 6,
        x: 12,
        y: 48,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_velocity_ratio{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'On-chain volume over market cap (inverse of NVT).',
    },
    {
      type: 'timeseries',
      title: 'Fund holdings',
      id: 20,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 6,
        x: 18,
        y: 48,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_fund_digital_asset_holdings{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{symbol}} ({{asset}})',
          range: true,
          instant: false,
        },
      ],
      description: 'Digital assets held by funds (ETFs, trusts), per asset.',
    },
    {
      type: 'timeseries',
      title: 'Launchpad tokens created per window',
      id: 21,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 0,
        y: 56,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_launchpad_new_tokens{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Tokens created on launchpads per window.',
    },
    {
      type: 'timeseries',
      title: 'Launchpad token creation events (change over 24 h)',
      id: 22,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 8,
        y: 56,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_launchpad_token_create_events_total{job=~"$job", asset=~"$asset", window=~"$window"}[1d])) - max without (instance, pod) (last_over_time(onchain_launchpad_token_create_events_total{job=~"$job", asset=~"$asset", window=~"$window"}[1d] offset 24h))',
          legendFormat: '{{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'How much the launchpad token creation counter grew over the last 24 hours.',
    },
    {
      type: 'timeseries',
      title: 'Newest block height (block-window series)',
      id: 23,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 8,
        x: 16,
        y: 56,
      },
      fieldConfig: {
        defaults: {
          unit: 'none',
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
          expr: 'max by (asset, endpoint) (last_over_time(onchain_data_block_height{job=~"$job", asset=~"$asset"}[1d]))',
          legendFormat: '{{asset}} {{endpoint}}',
          range: true,
          instant: false,
        },
      ],
      description: 'The block height of the newest row of each block-window series: a flat line is a chain, or an endpoint, that stopped.',
    },
    {
      type: 'row',
      title: 'Valuation',
      id: 24,
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
      title: 'Capitalization',
      id: 25,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 65,
      },
      fieldConfig: {
        defaults: {
          unit: 'currencyUSD',
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
          expr: 'max without (instance, pod) (last_over_time(onchain_market_cap_usd{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'market {{asset}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_realized_cap_usd{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'realized {{asset}}',
          range: true,
          instant: false,
        },
        {
          refId: 'C',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_average_cap_usd{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'average {{asset}}',
          range: true,
          instant: false,
        },
        {
          refId: 'D',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_delta_cap_usd{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'delta {{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Market capitalization against realized capitalization in USD; their gap is what MVRV measures.',
    },
    {
      type: 'timeseries',
      title: 'MVRV Z-score',
      id: 26,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 65,
      },
      fieldConfig: {
        defaults: {
          unit: 'short',
          thresholds: {
            mode: 'absolute',
            steps: [
              {
                color: 'blue',
                value: null,
              },
              {
                color: 'transparent',
                value: 0,
              },
              {
                color: 'red',
                value: 7,
              },
            ],
          },
          custom: {
            thresholdsStyle: {
              mode: 'line+area',
            },
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
          expr: 'max without (instance, pod) (last_over_time(onchain_mvrv_z_score{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: '{{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'The MVRV Z-score over time: above 7 marked past cycle tops, below 0 past bottoms (OnchainMVRVZScore* alerts).',
    },
    {
      type: 'timeseries',
      title: 'UTxOs spent in profit / at a loss (share)',
      id: 27,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 0,
        y: 73,
      },
      fieldConfig: {
        defaults: {
          unit: 'percentunit',
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
          expr: 'max without (instance, pod) (last_over_time(onchain_utxo_profit_ratio{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'profit {{asset}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_utxo_loss_ratio{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'loss {{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: 'Share of the UTxOs spent in each window that moved in profit or at a loss.',
    },
    {
      type: 'timeseries',
      title: 'UTxOs spent in profit / at a loss (amount)',
      id: 28,
      datasource: {
        type: 'prometheus',
        uid: '${datasource}',
      },
      gridPos: {
        h: 8,
        w: 12,
        x: 12,
        y: 73,
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
          expr: 'max without (instance, pod) (last_over_time(onchain_utxo_profit_amount{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'profit {{asset}}',
          range: true,
          instant: false,
        },
        {
          refId: 'B',
          datasource: {
            type: 'prometheus',
            uid: '${datasource}',
          },
          expr: 'max without (instance, pod) (last_over_time(onchain_utxo_loss_amount{job=~"$job", asset=~"$asset", window=~"$window"}[1d]))',
          legendFormat: 'loss {{asset}}',
          range: true,
          instant: false,
        },
      ],
      description: "Amount of the UTxOs spent in each window that moved in profit or at a loss, in the asset's units.",
    },
  ],
  refresh: '1m',
  schemaVersion: 39,
  tags: [
    'onchain_exporter',
    'onchain',
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
        query: 'label_values(onchain_data_timestamp_seconds{api="data"}, job)',
        definition: 'label_values(onchain_data_timestamp_seconds{api="data"}, job)',
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
        query: 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job"}, asset)',
        definition: 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job"}, asset)',
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
        query: 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", asset=~"$asset"}, window)',
        definition: 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", asset=~"$asset"}, window)',
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
        name: 'exchange',
        label: 'Exchange',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", asset=~"$asset"}, exchange)',
        definition: 'label_values(onchain_data_timestamp_seconds{api="data", job=~"$job", asset=~"$asset"}, exchange)',
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
        name: 'token',
        label: 'Token',
        type: 'query',
        datasource: {
          type: 'prometheus',
          uid: '${datasource}',
        },
        query: 'label_values(onchain_exchange_reserve{job=~"$job"}, token)',
        definition: 'label_values(onchain_exchange_reserve{job=~"$job"}, token)',
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
  title: 'On-chain overview',
  uid: 'onchain-overview',
  version: 1,
  weekStart: '',
}
