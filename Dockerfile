# A minimal dwp image: the binary alone, linked statically against musl, FROM scratch.
#
#   docker build -t dwp .
#   docker run --rm -v "$PWD:/repo" -w /repo dwp verify --all .
#
# The build stage is Alpine's Rust image, whose native target is musl: `cargo build --release`
# there links a static binary without cross tools, for whichever architecture builds the image.
# The final stage has no shell, no git and no certificates: `dwp verify`, `status`, `validate`
# and the writers work; `reconcile --git` and `dwp run`'s commands need a fuller image.
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin dwp \
    && ./target/release/dwp --version

FROM scratch
COPY --from=build /src/target/release/dwp /dwp
ENTRYPOINT ["/dwp"]
CMD ["--help"]
