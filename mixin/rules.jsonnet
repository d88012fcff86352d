// jsonnet -S mixin/rules.jsonnet > rules.yml
std.manifestYamlDoc((import 'mixin.libsonnet').prometheusRules, true, false)
