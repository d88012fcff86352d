# syntax=docker/dockerfile:1
#
# Build:  docker build --build-arg REVISION=$(git rev-parse HEAD) -t onchain_exporter .
#         (the version is VERSION's, as <VERSION>-devel, unless
#         --build-arg VERSION=... says otherwise; releases are built by
#         goreleaser with Dockerfile.release)
# Run:    docker run -p 9799:9799 onchain_exporter --demo --web.listen-address=:9799
#         docker run -p 9799:9799 -e ONCHAIN_DATA_TOKEN=... \
#           -v $PWD/config.yml:/etc/onchain_exporter/config.yml:ro \
#           -v onchain-state:/var/lib/onchain_exporter onchain_exporter

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=
ARG REVISION=unknown
ARG BRANCH=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=${VERSION} \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=docker \
        -X github.com/prometheus/common/version.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)" \
      -o /out/onchain_exporter . \
 && /out/onchain_exporter --version \
 && mkdir -p /out/state

# distroless/static: CA certificates and tzdata for HTTPS upstreams, no
# shell, runs as nobody (65534).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/onchain_exporter /bin/onchain_exporter
COPY examples/config.yml /etc/onchain_exporter/config.yml
# The state kept across restarts (--storage.path): each series' last
# values and schedule. The image has no shell to mkdir and chown it, so the
# directory is copied in owned by the user the exporter runs as; a named
# volume mounted there starts with that ownership.
COPY --from=build --chown=65534:65534 /out/state /var/lib/onchain_exporter
VOLUME ["/var/lib/onchain_exporter"]
USER 65534:65534
# The default --storage.path (onchain_exporter_data/) is relative: with this working
# directory it is the volume too when a user replaces the CMD's flags.
WORKDIR /var/lib/onchain_exporter
EXPOSE 9799
# No HEALTHCHECK: the image has no shell or HTTP client to run one. The
# exporter answers GET /-/healthy (liveness) and /-/ready (readiness);
# point the orchestrator's HTTP probe at them (see examples/kubernetes).
ENTRYPOINT ["/bin/onchain_exporter"]
CMD ["--config.file=/etc/onchain_exporter/config.yml", "--storage.path=/var/lib/onchain_exporter"]
