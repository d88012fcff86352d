// docs/signals.md, written by mixin/generate.jsonnet from the signal list
// and the levels of _config, so that the page says the levels in force.
local list = import '../alerts/signal-list.libsonnet';

function(mixin)
  local cfg = mixin._config;
  local s = cfg.signals;
  local lv = s.levels;
  local num(x) = if x == 0 then '0' else '%g' % x;
  local level(sig) = (if std.get(sig, 'negate', false) then -1 else 1) * lv[sig.level];
  local side(sig) = if sig.op == '>' then 'above' else 'below';

  local when(sig) =
    if sig.kind == 'level' then
      'a new row crosses %s %s' % [side(sig), num(level(sig))]
    else if sig.kind == 'zscore' then
      'a new row is more than %s standard deviations %s the mean of its history (the value at 00:00 UTC of each of the last %d days, at least %d of them)%s' % [
        num(std.abs(level(sig))),
        side(sig),
        s.historyDays,
        s.minHistoryDays,
        if std.objectHas(sig, 'sign') then ', and is itself %s' % (if sig.sign == '>' then 'positive' else 'negative') else '',
      ]
    else if sig.kind == 'ratio' then
      'a new row is more than %s times its average of the %s before it%s' % [
        num(level(sig)),
        lv[sig.over],
        if std.objectHas(sig, 'minLevel') then ' and at least %s' % num(lv[sig.minLevel]) else '',
      ]
    else
      'a new row is %s %s %% %s the row before' % [
        if sig.op == '>' then 'up by more than' else 'down by more than',
        num(100 * std.abs(level(sig))),
        'from',
      ];

  local keyOf(sig) = '`%s`%s' % [sig.level, if std.objectHas(sig, 'over') then ', `%s`' % sig.over else ''] + (if std.objectHas(sig, 'minLevel') then ', `%s`' % sig.minLevel else '');

  local table = std.join('\n', [
    '| alert | category | fires when | `_config.signals.levels` | series | source |',
    '|---|---|---|---|---|---|',
  ] + [
    '| [%s](#%s) | %s | %s | %s | `%s` | `%s` |' % [
      sig.alert,
      std.asciiLower(sig.alert),
      sig.category,
      when(sig),
      keyOf(sig),
      // A | in a table's cell, even between backquotes, ends the cell.
      std.strReplace(sig.metric + (if std.objectHas(sig, 'matchers') then '{%s}' % sig.matchers else ''), '|', '\\|'),
      sig.path,
    ]
    for sig in list.signals
  ]);

  local sections = std.join('\n', [
    |||
      ### %(alert)s

      %(summary)s It fires when %(when)s, on a row of window %(windows)s (`category: market`,
      `severity: info`), once, at the first evaluation that sees the row.

      - Series: `%(metric)s`, from `%(path)s`.
      - Level: %(keys)s in `_config.signals.levels`; category `%(category)s` in
        `_config.signals.categories`.
      - Runbook: the level is a historical reading of the provider's analysts, not advice. Look at
        the series on the **On-chain signals** dashboard beside the others of its category; a
        signal alone has often been followed by nothing.
    ||| % {
      alert: sig.alert,
      summary: sig.summary,
      when: when(sig),
      windows: std.join(' or ', ['`%s`' % w for w in s.windows]),
      metric: sig.metric + (if std.objectHas(sig, 'matchers') then '{%s}' % sig.matchers else ''),
      path: sig.path,
      keys: keyOf(sig) + ' = ' + std.join(', ', [num(level(sig))] + (if std.objectHas(sig, 'over') then [lv[sig.over]] else []) + (if std.objectHas(sig, 'minLevel') then [num(lv[sig.minLevel])] else [])),
      category: sig.category,
    }
    for sig in list.signals
  ]);

  local counts = std.join('\n', [
    '| `%s` | %d | %s |' % [
      c,
      std.length([sig for sig in list.signals if sig.category == c]),
      std.join(', ', [sig.alert for sig in list.signals if sig.category == c]),
    ]
    for c in list.categories
  ]);

  |||
    # On-chain signals

    <!-- Generated from the mixin (mixin/docs/signals.libsonnet, mixin/alerts/signal-list.libsonnet)
    by `jsonnet -J mixin -S -m . mixin/generate.jsonnet`. Do not edit: change mixin/ and regenerate. -->

    The signal pack: %(count)d alerting rules on the levels the data provider's analysts read on-chain
    series by (MVRV, NUPL, Puell multiple, SOPR, exchange flows and reserves, open interest, funding
    rates, leverage, stablecoins, miners), in the mixin's groups `onchain-signals-<category>`
    ([`mixin/alerts/signals.libsonnet`](../mixin/alerts/signals.libsonnet)). The levels are
    historical readings, not advice: a rule says that a series crossed a level its analysts mark,
    minutes after the row is published, and nothing more.

    - [Enabling the pack](#enabling-the-pack), [how a signal is evaluated](#evaluated-on-the-row),
      [routing](#routing), [tests](#tests)
    - [The signals](#the-signals), one section each
    - [Late rows](#late-rows): `OnchainDataLate`, `OnchainProviderLate`

    ## Enabling the pack

    **The default install stays quiet**: every category is off, no group `onchain-signals-<category>`
    is rendered at all, so [`examples/alerts.yml`](../examples/alerts.yml), the Helm chart's rules and
    the PrometheusRule carry none of it and Prometheus evaluates nothing of it. A user enables
    categories in `_config.signals.categories`:

    ```sh
    jsonnet -J mixin -S -e "std.manifestYamlDoc(((import 'mixin.libsonnet') + { _config+:: { signals+: { categories+: { valuation: true, flows: true } } } }).prometheusAlerts, true, false)" > my-alerts.yml
    promtool check rules my-alerts.yml
    ```

    | category | rules | alerts |
    |---|---|---|
    %(counts)s

    Each category enabled is one group, `onchain-signals-<category>` (`onchain-signals-valuation`,
    ...): the whole pack is more than the 20 rules mixtool's lint allows a group.
    [`examples/signals.yml`](../examples/signals.yml) is the pack with every category on, its groups
    alone, to load beside `alerts.yml` without jsonnet (`rule_files: [alerts.yml, signals.yml]`).
    Five of its alerts (`OnchainExchangeReserveFallingFast`, `OnchainOpenInterestSpike`,
    `OnchainMVRVZScoreOverheated`, `OnchainMVRVZScoreUndervalued`, `OnchainStablecoinSupplySurge`)
    were once in `alerts.yml`'s group `onchain-market-signals`, evaluated on a level held for
    minutes; they live in the pack alone now, evaluated on the row, so an install that wants them
    enables their category (or loads `signals.yml`). They read the same `_config` keys as before
    (`exchangeReserveChange`, `openInterestSpikeRatio`, `mvrvZScoreHigh`, `mvrvZScoreLow`,
    `stablecoinSurgeFactor`, `stablecoinSurgeMinEvents`).

    The series must be configured: every signal names its path below, and a data-API
    [pattern](configuration.md#patterns-every-series-the-plan-allows) such as `/v1/btc/**` brings
    most of them in at once. A signal whose series is not served never fires.

    A level is changed in `_config.signals.levels`, never in a rule:
    `{ _config+:: { signals+: { levels+: { mvrvHigh: 3.2 } } } }`. Other settings of
    `_config.signals`:

    | key | default | what it does |
    |---|---|---|
    | `categories` | every one `false` | the categories rendered |
    | `windows` | `%(windows)s` | the windows whose rows the rules read; the levels are daily readings, and a finer window fires on its own rows |
    | `lookbackMinutes` | `%(lookback)d` | how long after a row is served its rule sees it, and how long an alert stays firing |
    | `rowAgeSeconds` | day 2 d, hour 3 h, 10min and min 1 h | a row whose interval ended longer ago is stale: its rule stays silent |
    | `historyDays`, `minHistoryDays` | `%(history)d`, `%(minHistory)d` | the history a z-score reads (one value a day, at 00:00 UTC), and the least of it a rule needs |
    | `runbookURLPattern` | `runbookURLPattern` with `signals.md` for `operations.md` | each signal's `runbook_url`: its section below |

    ## Evaluated on the row

    A signal's series changes once a row: a day row once a day, when the provider publishes it. A
    rule that holds a level for `for: 5m` would fire all day, every day the value stays beyond it, and
    say nothing of when it crossed. The pack's rules look at the row when it comes instead:

    - a rule fires when a **new row** of its series is served, that is when
      `onchain_data_timestamp_seconds` (the row's time) of the series has moved within
      `lookbackMinutes`, joined on the series' labels (asset, window and its parameters);
    - and that row **crosses** the level while the row before it (the value served
      `lookbackMinutes` earlier) did not; a change (reserves) is measured from the row before, so
      each row that moves that far is a crossing of its own;
    - it fires at the first evaluation after the row is scraped, without `for:`, and resolves
      `lookbackMinutes` later: one notification per crossing, none while a value stays beyond its
      level, none on a revision of a row already served;
    - it is **silent while its series is stale**: a row whose interval ended longer ago than the
      provider calls healthy (`rowAgeSeconds`, the limits of `OnchainDataStale`) fires nothing, such
      as a stalled series catching up on an old row;
    - one alert for a cluster's members (`max without (instance, pod)`), per job.

    ## Routing

    Every signal has `category: market` and `severity: info`: none pages.
    [`examples/alertmanager.yml`](../examples/alertmanager.yml) routes `category="market"` to the
    `desk` receiver, grouped by alert and asset, without a resolved message (an alert of the pack
    resolves `lookbackMinutes` after its row by design, not because the market moved back).

    ## Tests

    [`examples/signals_test.yml`](../examples/signals_test.yml), written by
    [`mixin/tests/signals_test.jsonnet`](../mixin/tests/signals_test.jsonnet), runs every signal on
    synthetic day rows served by two members: it fires at the evaluation that first sees its
    crossing row (one alert for both members), not at the evaluation `lookbackMinutes` later nor
    on the next row still beyond the level, and again on a later crossing; a replay of rows that
    never cross is silent, and so is a series against too short a history; a stalled series that
    catches up with an old crossing row is silent, and so is a value revised across the level
    without a new row.

    ```sh
    cd examples && promtool test rules signals_test.yml
    ```

    The day-two harness replays a week of the chart's default (two members, two jobs, the fake's
    rows with jittered releases, an outage, a lost member, rows held back) with the whole pack
    loaded, and holds its firings to the levels of this page recomputed on the fake's own rows:
    each firing must be on a row that crosses, each crossing must fire. The run's series that a
    signal reads are btc's MVRV and btc's reserve and netflow at binance (netflow's z-score needs
    14 days of history and stays silent). Over the week from 12:00 UTC the pack fired 3 times,
    each on a row of the reserve that moved more than 5 %% from the row before
    (`OnchainExchangeReserveRisingFast` on the row of Nov 20, `OnchainExchangeReserveFallingFast`
    on those of Nov 24 and Nov 26): the fake's reserve crosses that level, and the firings are
    right. Nothing else fired: MVRV stays between its levels
    (`go test -count=1 -run TestDayTwo -v ./daytwo/`, the lines `day two` and `the signal pack`).

    ## The signals

    %(table)s

    %(sections)s
    ## Late rows

    The exporter learns, per endpoint and window, when the provider publishes its rows: the delay after
    a row's interval ends (`onchain_exporter_publication_delay_seconds`) and how much it spreads.
    `OnchainDataLate` and `OnchainProviderLate`
    ([`mixin/alerts/late.libsonnet`](../mixin/alerts/late.libsonnet), group `onchain-data-late`) read
    when the next row of each endpoint is due at the latest,
    `onchain_exporter_row_due_timestamp_seconds{api, endpoint, window}`: the end of the next row's
    interval (after the newest row any series of the endpoint serves), plus the learned release (the
    latest delay at which its last 16 rows found on time were found), plus the margin the spread of the
    API's rows of that window explains ([`schedule/pool.go`](../schedule/pool.go)). Each endpoint keeps
    its own location (its learned release); the width over which releases spread is the provider's
    pipeline, shared by the API's endpoints of one window, and is pooled across them: with each
    endpoint's delays uniform over [a, a + L], its own a, one L, the margin is the t for which the next
    row passes the learned release by more than t with a chance of 1 in 1 000, averaged over what all
    the endpoints' ranges say of L (the posterior of L under the prior flat in each a and 1/L in L, for
    which that chance is also the frequentist one). With L known it is (L − S)·(1 − √(2·10⁻³·L/(L −
    S))), S the endpoint's own range: what its few rows leave unknown of its location, not of the
    spread, is then what the margin pays for. An endpoint whose range the others' rows make unlikely (a
    chance under 1 %% narrower, under 0.1 %% wider) is another habit: it gives nothing to the others'
    pool, and, wider, keeps its own rule. So does every endpoint while fewer than 3 of the API's window
    have 2 rows found on time each. The own rule is k(n) times the spread (latest less earliest) of its
    n rows, k(n) = ((n+1)/1000)^(-1/(n-1)) - 1, so that delays spread uniformly between bounds the
    provider never says pass it once in a thousand rows (14.8 for 3 rows, 0.96 for 8, 0.31 for 16)
    ([`schedule/release.go`](../schedule/release.go)). Either margin is at least 2 minutes and at most a
    12th of the window. A row found past its due time teaches neither the release nor the next row's
    first poll (two in a row are a new habit). The exporter serves it for windowed rows (`min`, `10min`,
    `hour`, `day`) once two rows were found on time; block rows and rows without a window have none.
    Four day keys of 3 rows each, whose own spread leaves the cap (2 h), are due 42 min to 55 min past
    their learned release with the spread pooled, and 4 min to 7 min with 16 rows each (13 min to 14 min
    on their own) (`go test ./schedule -run TestPooled -v`); over 6 000 simulated day rows of 5
    endpoints per API (widths 20 min to 80 min, locations up to 3 h apart, 200 weeks of 8 days), 10
    passed their pooled due time (1.7 in 1 000), and on the third and fourth day it lay 32 min past the
    learned release at the median. Day rows of 50 min ±50 %% of one endpoint alone are due 14 min after
    the learned release at the median once 16 are known (`go test ./schedule -run
    TestDueTimeOnAUniformJitter -v`: 7 of 3 000 rows past their due time). On the fake's clock with hour
    and day delays jittered by ±50 %% over three simulated days it was never passed while the provider
    kept its habit, and an hour row published 3 h late was known 3 min 56 s after its latest habitual
    publication (`go test ./collector -run TestRowDueTime -v`).

    The day-two harness evaluates the alerts over a week of the chart's default (two members, two jobs,
    hour and day releases jittered by ±50 %%, independently per endpoint), rows held back by the fake:
    four hour rows and two day rows late alone (one while a member was lost), and a provider incident
    that held every windowed row of the data API for 5 hours. Over the seven simulated days no late
    alert fired outside the holds (0 false, the data API's 2-hour outage included); each row held back
    was raised once, across members and jobs, 2 min to 3 min after its due time (the run steps a minute
    around a due time, ten otherwise). After the learned release (the due time less its tolerance) that
    is 5 min for hour rows (their tolerance is the 2-minute floor; the API has too few hour endpoints to
    pool), and 30 min (netflow) and 33 min (mvrv) for day rows, with the spread pooled across the data
    API's four day endpoints (1 h 39 min and 2 h 3 min on each endpoint's own 4 and 3 rows, the cap for
    3). What is left is not the spread: it is how far an endpoint's latest of 3 or 4 rows lies below the
    top of its habit. Rows uniform over 50 min, even a rule that knew each endpoint's top exactly would
    put the latest of 3 rows more than 15 min below it for a third of the endpoints (p95 32 min);
    knowing the width exactly but the location only from those 3 rows, the margin a 1-in-1 000 chance
    needs is above 15 min for three endpoints in four. A p95 of 15 min after the learned release is out
    of reach while day keys know 3 or 4 rows, whatever pools the spread. The incident raised
    `OnchainProviderLate` once, 1 h 45 min into it (2 h 50 min before the spread was pooled). A day row
    held 5 hours teaches its endpoint nothing; its next row's due time moves only as the other day
    endpoints' rows move the pooled spread (mvrv 1 h 58 min to 2 h 3 min after the next row's close
    before, as the run's timing has the other endpoints' rows found, 1 h 57 min after; netflow 1 h 57
    min, 1 h 52 min). The runs from 00:30 and 23:30 UTC (the first day and three hours) raised no late
    alert (`go test -count=1 -run TestDayTwo -v ./daytwo/`, the lines `day two` and `late_test.go`).

    The alerts are off by default (`_config.dataLate.enabled`: the default install stays quiet);
    [`examples/late.yml`](../examples/late.yml) is the group rendered, tested by
    [`examples/late_test.yml`](../examples/late_test.yml).

    | `_config.dataLate` key | default | what it does |
    |---|---|---|
    | `enabled` | `false` | render the group |
    | `for` | `%(lateFor)s` | how long an endpoint stays past due before it is late: a row found just before its due time and not yet scraped does not fire |
    | `incidentShare`, `incidentMinEndpoints` | `%(share)s`, `%(min)d` | `OnchainProviderLate`: the share of an API's endpoints, and the fewest, late at once |

    ### OnchainDataLate

    The provider has not published the next row of an endpoint by the time its learned publication
    delay and spread say it comes (severity `info`). One alert per endpoint, whatever the number of
    its series, windows, members or jobs: an endpoint is late when any of its windows is, read across
    members and jobs. Not while the API is paused, nor for a window whose every series fails (a
    provider's outage fails the windows polled meanwhile, while a day window not yet due still holds
    its last success): the rows would then be late here, and `OnchainUpstreamAuthFailing`,
    `OnchainQueryFailing` or `OnchainUpstreamRateLimited` say why.

    Runbook: nothing to fix in the exporter; it polls the row in widening steps and serves it as
    soon as it is out (the page shows the series as `late` once two rows are missing). Check the
    provider's status page; a row more than two days late also raises `OnchainDataStale`.

    ### OnchainProviderLate

    At least %(sharePct)s of the endpoints of one API, and at least %(min)d of them, are late at once
    (severity `warning`): an incident at the provider, raised once per API. The example
    `alertmanager.yml` inhibits each endpoint's `OnchainDataLate` meanwhile.

    Runbook: tell the data's consumers that the provider is late; nothing to change in the exporter,
    which keeps polling and serves the rows when they come.
  ||| % {
    count: std.length(list.signals),
    counts: counts,
    windows: std.join(', ', s.windows),
    lookback: s.lookbackMinutes,
    history: s.historyDays,
    minHistory: s.minHistoryDays,
    table: table,
    sections: sections,
    lateFor: cfg.dataLate['for'],
    share: num(cfg.dataLate.incidentShare),
    sharePct: num(100 * cfg.dataLate.incidentShare) + ' %',
    min: cfg.dataLate.incidentMinEndpoints,
  }
