# syntax=docker/dockerfile:1
# The TNS image: `tns` with its adapter plugins beside it, run as a non-root user.
#   docker build -t tns:0.1.0 .
#   docker run --rm tns:0.1.0 adapters        (the role is the argument)
# Build and run stages share one Debian release, so the binary finds the glibc it was linked
# against.

ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=trixie

FROM docker.io/library/rust:${RUST_VERSION}-slim-${DEBIAN_RELEASE} AS build
WORKDIR /src
COPY . .
# The binary and the shipped plugins only: the workspace also holds test fixture plugins and
# benchmarks, which must not reach the image. Every plugin built is copied (`libtns_adapter_*.so`);
# the cached target directory is first rid of plugins an earlier build left (cargo links again
# those it builds, even unchanged), so only the ones listed here are shipped.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    rm -f target/release/libtns_adapter_*.so \
    && cargo build --release --locked -p tns -p tns-adapter-sandbox -p tns-adapter-uetds \
    && mkdir -p /out/adapters \
    && cp target/release/tns /out/ \
    && cp target/release/libtns_adapter_*.so /out/adapters/

FROM docker.io/library/debian:${DEBIAN_RELEASE}-slim
# ca-certificates: TLS to U-ETDS and to webhook receivers is verified against the platform's roots.
# Debian keeps one ca-certificates per release; its version is not worth pinning.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tns \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin tns
COPY --from=build /out/tns /usr/local/bin/tns
# Root-owned and read-only to the tns user: plugins are trusted code, loaded from here alone.
COPY --from=build /out/adapters/ /usr/local/lib/tns/adapters/
ENV TNS_ADAPTER_DIR=/usr/local/lib/tns/adapters
USER 10001:10001
# API, metrics.
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/tns"]
CMD ["help"]
