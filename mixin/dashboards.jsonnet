// jsonnet -m out/ mixin/dashboards.jsonnet writes one file per dashboard.
(import 'mixin.libsonnet').grafanaDashboards
