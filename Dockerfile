# syntax=docker/dockerfile:1
#
# Crema server image: `docker build -t crema .`
#
# Two stages: a Swift toolchain image compiles `crema` with the Swift runtime linked in statically
# (--static-swift-stdlib), and a slim Debian image runs it with only libpq and the system basics.
# SwiftPM resource bundles (`*.resources`: the OpenAPI document, the SQL migrations) must sit next to
# the binary, so they are copied into /app with it.
#
# The image needs a database: set CREMA_DATABASE_URL (or libpq's PG* variables). The embedded private
# cluster that `crema serve` starts when no database is configured needs initdb/pg_ctl, which this
# image does not ship. See docker-compose.yml for a complete setup.
#
# No HEALTHCHECK: the runtime image has no HTTP client. Probe GET /health/ready (readiness) and
# GET /health/live (liveness) from the orchestrator instead.

ARG SWIFT_IMAGE=swift:6.2-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build

RUN export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
    && apt-get -q update \
    && apt-get -q install -y --no-install-recommends libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .

# .build lives in a BuildKit cache mount so rebuilds are incremental; everything the runtime stage needs
# is copied out to /staging inside the same RUN. Package.resolved pins versions when it is present.
RUN --mount=type=cache,id=crema-swiftpm-build,target=/src/.build \
    set -eu; \
    swift build -c release --product crema --static-swift-stdlib \
        $([ -f Package.resolved ] && echo --force-resolved-versions); \
    bin="$(swift build -c release --show-bin-path)"; \
    mkdir -p /staging; \
    cp "$bin/crema" /staging/; \
    find -L "$bin/" -maxdepth 1 -name '*.resources' -exec cp -RL {} /staging/ \; ; \
    ls -d /staging/*.resources >/dev/null; \
    if [ -x /usr/libexec/swift/linux/swift-backtrace-static ]; then \
        cp /usr/libexec/swift/linux/swift-backtrace-static /staging/; \
    fi; \
    chmod -R a-w,a+rX /staging

# ---------------------------------------------------------------------------------------------------
# Run
# ---------------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE}

# libpq5: the PostgreSQL client library crema links against; ca-certificates: TLS to APNs and to
# databases with sslmode=verify-full; tzdata: IANA time zones for stores.
RUN export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
    && apt-get -q update \
    && apt-get -q install -y --no-install-recommends libpq5 ca-certificates tzdata libstdc++6 \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --system --user-group --create-home --skel /dev/null --home-dir /app crema

WORKDIR /app
# Owned by root and read-only: the service cannot modify its own binary or resources.
COPY --from=build /staging/ /app/

USER crema:crema

ENV CREMA_HTTP_HOST=0.0.0.0 \
    CREMA_HTTP_PORT=8080 \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/app/swift-backtrace-static

EXPOSE 8080

ENTRYPOINT ["/app/crema"]
CMD ["serve"]
