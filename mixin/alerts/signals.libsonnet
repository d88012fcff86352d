// The signal pack: alerts on the levels the data provider's analysts read
// on-chain series by (MVRV, NUPL, Puell multiple, SOPR, exchange flows,
// open interest, funding rates, stablecoins, miners). Not faults of the
// exporter: severity info, category market, for the desk's route of
// examples/alertmanager.yml; the rules of a category in the group
// onchain-signals-<category>.
// docs/signals.md lists them with their levels and sources.
//
// Off by default. A category is enabled in _config.signals.categories;
// with none enabled no group is rendered at all, so the default
// install evaluates nothing of the pack and examples/alerts.yml does not
// change. examples/signals.yml is the pack with every category enabled.
//
// Evaluated on the row. A signal's series changes once a row (a day for
// window day), so a level held for minutes says nothing; the rules look
// at the row when it comes instead: a rule fires when a new row of its
// series is served (onchain_data_timestamp_seconds, the row's time,
// moved within lookbackMinutes) and that row crosses the level, the row
// before it (the value served lookbackMinutes earlier) not having done
// so. It fires at the first evaluation after the row is served and
// resolves lookbackMinutes later: one notification per crossing, none
// while a value stays beyond its level, none on a revision of a row
// already served. A row whose interval ended longer ago than the
// provider calls healthy (rowAgeSeconds, as OnchainDataStale) is stale,
// and its rule stays silent.
//
// The thresholds are in _config.signals.levels: a user changes a level,
// not a rule. Five alerts of the pack (OnchainExchangeReserveFallingFast,
// OnchainOpenInterestSpike, OnchainMVRVZScoreOverheated and
// OnchainMVRVZScoreUndervalued, OnchainStablecoinSupplySurge) were once
// in the group onchain-market-signals (alerts.libsonnet); they are here
// alone, evaluated on the row, and read the _config keys they read there.
local list = import 'signal-list.libsonnet';

// num writes a level as PromQL reads it ('%g' % 0 overflows in
// go-jsonnet 0.20, which mixtool uses).
local num(x) = if x == 0 then '0' else '%g' % x;

// indent puts n spaces before every line of text that is not empty.
local indent(text, n) = std.join('\n', [
  if line == '' then line else std.repeat(' ', n) + line
  for line in std.split(std.rstripChars(text, '\n'), '\n')
]);

{
  _config+:: {
    signals+: {
      // The categories of the pack, each off: enable one with
      // { _config+:: { signals+: { categories+: { valuation: true } } } }.
      categories: {
        valuation: false,  // MVRV, NUPL, Puell multiple, SOPR, NVT golden cross, MVRV Z-score
        flows: false,  // exchange netflow, reserves, whale ratio
        derivatives: false,  // open interest, funding rates, estimated leverage ratio
        stablecoins: false,  // mint and burn events, stablecoins ratio, stablecoin supply ratio
        miners: false,  // miner outflow, miners' position index
      },

      // The windows whose rows the rules read: the levels are daily
      // readings. day, hour, 10min and min are known (block rows have no
      // fixed spacing); a finer window fires on its own rows, more often.
      windows: ['day'],

      // How long after a row is served its rule sees it: the rule
      // compares the row with the value served this long before, and
      // fires for this long. At least two evaluation intervals and the
      // scrape interval of the data job.
      lookbackMinutes: 10,

      // A row whose interval ended more than this many seconds ago is
      // stale: the provider's healthy limits (as OnchainDataStale's
      // warning), per window.
      rowAgeSeconds: { day: 2 * 86400, hour: 3 * 3600, '10min': 3600, min: 3600 },

      // Rules that read a series against its own history take its values
      // at 00:00 UTC of the last historyDays days, and stay silent until
      // minHistoryDays of them are there.
      historyDays: 30,
      minHistoryDays: 14,

      // Where each signal's runbook_url points: its section of
      // docs/signals.md (%s is the alert's name in lower case).
      runbookURLPattern: std.strReplace($._config.runbookURLPattern, 'operations.md', 'signals.md'),

      // The levels. Those of the alerts that came from the group
      // onchain-market-signals keep their _config keys (config.libsonnet).
      levels: {
        mvrvLow: 1,  // MVRV below: undervalued (market cap under realized cap)
        mvrvHigh: 3.7,  // MVRV above: the historical top zone
        nuplLow: 0,  // NUPL below: capitulation
        nuplHigh: 0.75,  // NUPL above: euphoria
        puellLow: 0.5,  // Puell multiple below: miners' income historically low
        puellHigh: 4,  // Puell multiple above: overheated
        sopr: 1,  // SOPR crossing: coins sold at a profit above, at a loss below
        nvtGoldenCrossHigh: 2.2,  // NVT golden cross above: downside risk
        nvtGoldenCrossLow: -1.6,  // NVT golden cross below: upside potential
        mvrvZScoreHigh: std.get($._config, 'mvrvZScoreHigh', 7),  // MVRV Z-score above: past cycle tops
        mvrvZScoreLow: std.get($._config, 'mvrvZScoreLow', 0),  // MVRV Z-score below: past cycle bottoms
        netflowZScore: 2,  // exchange netflow beyond this many standard deviations of its history
        exchangeReserveChange: std.get($._config, 'exchangeReserveChange', -0.05),  // reserve change from one row to the next, falling
        exchangeReserveRise: 0.05,  // reserve change from one row to the next, rising
        whaleRatioHigh: 0.9,  // exchange whale ratio above: whales dominate inflows
        openInterestSpikeRatio: std.get($._config, 'openInterestSpikeRatio', 1.2),  // open interest over its average of openInterestOver
        openInterestOver: '24h',
        fundingRateHigh: 0.1,  // funding rate above, in percent as served: longs overheated
        fundingRateLow: -0.1,  // funding rate below, in percent: shorts overheated
        leverageZScore: 2,  // estimated leverage ratio above its history by this many standard deviations
        stablecoinSurgeFactor: std.get($._config, 'stablecoinSurgeFactor', 3),  // mint or burn events over their average of stablecoinSurgeOver
        stablecoinSurgeMinEvents: std.get($._config, 'stablecoinSurgeMinEvents', 10),  // fewer events never fire
        stablecoinSurgeOver: '7d',
        stablecoinRatioZScore: -2,  // stablecoins ratio below its history by this many standard deviations
        ssrZScore: -2,  // stablecoin supply ratio below its history by this many standard deviations
        minerOutflowZScore: 2,  // miner outflow above its history by this many standard deviations
        mpiHigh: 2,  // miners' position index above: heavy miner selling
      },
    },
  },

  local cfg = $._config,
  local s = cfg.signals,
  local lv = s.levels,

  // sel is a signal's vector selector, offset n lookbacks.
  local off(n) = if n == 0 then '' else ' offset %dm' % (n * s.lookbackMinutes),
  local sel(sig) = '%s{%s, window=~"%s"%s}' % [
    sig.metric,
    cfg.onchainSelector,
    std.join('|', s.windows),
    if std.objectHas(sig, 'matchers') then ', ' + sig.matchers else '',
  ],
  local value(sig, n) = 'max without (%s) (%s%s)' % [cfg.memberLabels, sel(sig), off(n)],
  // over is fn over the values of the last `range`, once a `step`, up to
  // n lookbacks before now. A series' history is read once a day, at
  // 00:00 UTC: one value a day row, and a subquery of a few points.
  local over(sig, fn, range, step, n) = 'max without (%s) (%s(%s[%s:%s]%s))' % [cfg.memberLabels, fn, sel(sig), range, step, off(n)],
  local history(sig, fn, n) = over(sig, fn, '%dd' % s.historyDays, '1d', n),

  // level is a signal's level in force.
  local level(sig) = (if std.get(sig, 'negate', false) then -1 else 1) * lv[sig.level],

  // cond is a signal's condition on the value served n lookbacks ago,
  // against the history before it; its value is what the description
  // shows.
  local cond(sig, n) =
    if sig.kind == 'level' then
      '%s %s %s' % [value(sig, n), sig.op, num(level(sig))]
    else if sig.kind == 'zscore' then
      |||
        (%(value)s - %(avg)s)
          / (%(stddev)s > 0)
          %(op)s %(level)s
        and
        %(count)s >= %(rows)d%(sign)s
      ||| % {
        value: value(sig, n),
        avg: history(sig, 'avg_over_time', n + 1),
        stddev: history(sig, 'stddev_over_time', n + 1),
        op: sig.op,
        level: num(level(sig)),
        count: history(sig, 'count_over_time', n + 1),
        rows: s.minHistoryDays,
        sign: if std.objectHas(sig, 'sign') then '\nand\n%s %s 0' % [value(sig, n), sig.sign] else '',
      }
    else if sig.kind == 'ratio' then
      |||
        %(value)s
          / (%(avg)s > 0)
          %(op)s %(level)s%(min)s
      ||| % {
        value: value(sig, n),
        avg: over(sig, 'avg_over_time', lv[sig.over], if std.endsWith(lv[sig.over], 'd') then '1d' else '1h', n + 1),
        op: sig.op,
        level: num(level(sig)),
        min: if std.objectHas(sig, 'minLevel') then '\nand\n%s >= %s' % [value(sig, n), num(lv[sig.minLevel])] else '',
      }
    else if sig.kind == 'change' then
      |||
        (%(value)s - %(prev)s)
          / (%(prev)s > 0)
          %(op)s %(level)s
      ||| % {
        value: value(sig, n),
        prev: value(sig, n + 1),
        op: sig.op,
        level: num(level(sig)),
      }
    else error 'signal %s: unknown kind %s' % [sig.alert, sig.kind],

  // row is the set of series whose newest row was served within the
  // lookback (its time is newer than the one served a lookback ago) and
  // is fresh (newer than time() minus the window and rowAgeSeconds), per
  // window, on the labels that name a series.
  local ts(sig, window) = 'onchain_data_timestamp_seconds{%s, endpoint=~"%s", window="%s"}' % [cfg.onchainSelector, sig.endpoint, window],
  local spacing = { day: 86400, hour: 3600, '10min': 600, min: 60 },
  local row(sig) = std.join('\nor\n', [
    std.rstripChars(|||
      max without (%(m)s) (%(ts)s)
        > max without (%(m)s) (%(ts)s%(off)s)
        > time() - %(age)d
    ||| % {
      m: cfg.memberLabels,
      ts: ts(sig, w),
      off: off(1),
      age: spacing[w] + s.rowAgeSeconds[w],
    }, '\n')
    for w in s.windows
  ]),
  local join(sig) = std.join(', ', [cfg.groupLabels, 'asset', 'window'] + sig.params),

  local expr(sig) =
    if sig.kind == 'change' then
      // A change is measured from the row before: each row that moves
      // that far is a crossing of its own.
      |||
        (
        %(now)s
        )
        and on (%(join)s)
        (
        %(row)s
        )
      ||| % { now: indent(cond(sig, 0), 2), join: join(sig), row: indent(row(sig), 2) }
    else
      |||
        (
        %(now)s
        )
        unless
        (
        %(before)s
        )
        and on (%(join)s)
        (
        %(row)s
        )
      ||| % { now: indent(cond(sig, 0), 2), before: indent(cond(sig, 1), 2), join: join(sig), row: indent(row(sig), 2) },

  local rule(sig) = {
    alert: sig.alert,
    expr: expr(sig),
    labels: {
      severity: 'info',
      category: 'market',
    },
    annotations: {
      summary: sig.summary,
      description: sig.description % { level: num(level(sig)), days: s.historyDays } + ' ' + list.notAdvice,
      runbook_url: s.runbookURLPattern % std.asciiLower(sig.alert),
    },
  },

  local enabled = [sig for sig in list.signals if s.categories[sig.category]],

  // A group a category, onchain-signals-<category>: the whole pack is
  // more than the 20 rules mixtool's lint allows a group, and a category
  // enabled alone is one group.
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'onchain-signals-' + c,
        rules: [rule(sig) for sig in enabled if sig.category == c],
      }
      for c in list.categories
      if [sig for sig in enabled if sig.category == c] != []
    ],
  },
}
