// The settings of the onchain_exporter mixin. A consumer overrides any of
// them: (import 'mixin.libsonnet') + { _config+:: { onchainSelector: 'job="my-job"' } }.
{
  _config+:: {
    // The matcher that selects every series the rules and the dashboards'
    // job variable read: the scrape jobs of examples/prometheus.yml
    // (onchain_exporter, onchain_exporter_daily), the Kubernetes example's
    // (onchain-exporter, onchain-exporter-daily) and the Helm chart's all
    // start with "onchain". Add a namespace matcher to scope the rules to
    // one release: 'job=~"onchain.*", namespace="markets"'.
    onchainSelector: 'job=~"onchain.*"',

    // Several Kubernetes clusters in one Prometheus (or one Thanos or
    // Mimir): the alerts keep clusterLabel in every aggregation, so that
    // the same job in two clusters is two alerts, and the dashboards get a
    // cluster variable. Off, clusterLabel is not used at all.
    showMultiCluster: false,
    clusterLabel: 'cluster',

    // The labels that tell the members of one exporter cluster (or the
    // replicas of one Deployment) apart: the rules read a series across
    // them, so that one incident pages once, not once per member.
    memberLabels: 'instance, pod',

    // The labels an incident of the exporter is raised per, besides what
    // each alert adds (api, endpoint...): one alert per namespace and job,
    // and per cluster with showMultiCluster. The targets of one group are
    // the members of one exporter cluster (or one replica): while one is
    // up, the series are served. Derived; override showMultiCluster rather
    // than this.
    groupLabels: (if self.showMultiCluster then self.clusterLabel + ', ' else '') + 'namespace, job',

    // The labels that name one exporter process whatever the scrape jobs
    // that scrape it (collect[] jobs share its instance): OnchainExporterDown
    // and OnchainExporterMemberDown fire once per process, not once per
    // job, and the rules join an API's errors (the job that keeps the
    // exporter-wide families) to its queries (the job of its collector) on
    // them.
    targetLabels: (if self.showMultiCluster then self.clusterLabel + ', ' else '') + 'namespace, instance',

    // The window of the rates the alerts compute (the dashboards use
    // Grafana's $__rate_interval). At least four scrape intervals of the
    // slowest job that carries the exporter's own counters.
    rateInterval: '15m',

    // Thresholds.
    upstreamErrorRatio: 0.1,  // OnchainUpstreamErrorRatioHigh: share of failed requests
    dailyQuotaUsedRatio: 0.9,  // OnchainDailyQuotaNearlyUsed: share of the upstream's daily quota used
    // The signal pack's (signals.libsonnet) levels of the five alerts
    // that were once in the group onchain-market-signals: read as
    // _config.signals.levels' defaults.
    exchangeReserveChange: -0.05,  // OnchainExchangeReserveFallingFast: change from one row to the next
    openInterestSpikeRatio: 1.2,  // OnchainOpenInterestSpike: over the 24 h average
    mvrvZScoreHigh: 7,  // OnchainMVRVZScoreOverheated
    mvrvZScoreLow: 0,  // OnchainMVRVZScoreUndervalued
    stablecoinSurgeFactor: 3,  // OnchainStablecoinSupplySurge: times the 7-day average
    stablecoinSurgeMinEvents: 10,  // OnchainStablecoinSupplySurge: fewer events never fire
    consensusFlipMin: 0.1,  // OnchainConsensusFlipped: |score| both before and after
    clusterClockOffsetSeconds: 10,  // OnchainClusterClockSkew: a member's clock off the cluster's

    // Where each alert's runbook_url points; %s is the alert's name in
    // lower case.
    runbookURLPattern: 'https://github.com/onchain-exporter/onchain_exporter/blob/main/docs/operations.md#%s',

    // The dashboards: a prefix for their uids (to install a second copy
    // beside the first), their time zone and refresh.
    dashboardUIDPrefix: '',
    dashboardTimezone: 'utc',
    dashboardRefresh: '1m',
  },
}
