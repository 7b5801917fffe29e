# nki-agent's reward service, `nki-agent serve` (docs/serve.md), on Debian 12.
#   docker build -t nki-agent-serve .
#   docker run -p 8470:8470 -v $PWD/tokens.txt:/run/secrets/nkia-tokens:ro nki-agent-serve
# deploy/README.md: the shared reference cache, the token secret, Kubernetes.
FROM debian:12

ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8

# The build and run packages first, so that a source change does not reinstall them.
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN bash /tmp/install-deps.sh && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh

# Release build as scripts/build.sh makes it, without the tests and benchmarks. nki-agent-worker is
# built beside nki-agent, where nki-agent looks for it (through the symlink too: /proc/self/exe).
COPY . /opt/nki-agent
WORKDIR /opt/nki-agent
RUN BUILD_TYPE=Release bash scripts/build.sh build -DNKIA_BUILD_TESTS=OFF -DNKIA_BUILD_BENCH=OFF \
 && find build -type f \( -name '*.o' -o -name '*.a' \) -delete \
 && ln -s /opt/nki-agent/build/nki-agent /usr/local/bin/nki-agent

# A user of its own; the cache folder is writable for a container run without a volume there.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/nkia nkia \
 && mkdir -p /var/cache/nki-agent/references \
 && chown -R 10001:10001 /var/cache/nki-agent
USER 10001:10001
ENV NKIA_TASKS=/opt/nki-agent/tasks/nkibench \
    NKIA_REFERENCE_CACHE=/var/cache/nki-agent/references

EXPOSE 8470
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["/usr/bin/python3.11", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8470/health', timeout=4)"]
# Arguments given to `docker run` (or a pod's args) follow these: --workers, --queue, ...
ENTRYPOINT ["nki-agent", "serve", "--host", "0.0.0.0", "--tokens", "/run/secrets/nkia-tokens", \
            "--tasks", "/opt/nki-agent/tasks/nkibench", "--cache", "/var/cache/nki-agent/references"]
