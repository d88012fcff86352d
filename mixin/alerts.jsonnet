// jsonnet -S mixin/alerts.jsonnet > alerts.yml
std.manifestYamlDoc((import 'mixin.libsonnet').prometheusAlerts, true, false)
