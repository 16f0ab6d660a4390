# Builds the relay binary (pages built in) and runs `relay serve`.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p relay

FROM debian:bookworm-slim
COPY --from=build /src/target/release/relay /usr/local/bin/relay
EXPOSE 8080
ENTRYPOINT ["relay", "serve"]
