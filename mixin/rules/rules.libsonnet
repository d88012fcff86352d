// The mixin has no recording rules: every alert reads the exporter's
// series directly. The key is here for consumers that merge it.
{
  prometheusRules+:: {
    groups+: [],
  },
}
