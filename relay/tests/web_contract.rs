//! The pages' contract with the server. `web/types/ws-messages.schema.json` is the JSON Schema
//! of the WebSocket messages, committed as `relay::serve::wire::schema()` gives it (the same
//! document `GET /api/ws-messages.schema.json` serves); the pages' types
//! (`web/types/ws-messages.d.ts`) are generated from that file and TypeScript checks the
//! pages against them (`.ci/run`). This test keeps the file equal to the enum, so that a
//! message changed in Rust reaches the pages' check instead of passing it unseen.
//!
//! After changing a message: `RELAY_BLESS=1 cargo test -p relay --test web_contract` writes
//! the file again; then `npm ci && npm run types && npm run check` in `web/`.

use std::path::PathBuf;

const SCHEMA_FILE: &str = "web/types/ws-messages.schema.json";

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(SCHEMA_FILE)
}

/// The schema as the file holds it: pretty-printed, with a final newline.
fn schema_text() -> String {
    let schema = relay::serve::wire::schema();
    assert!(schema.is_object(), "the schema is a JSON object: {schema}");
    let mut text = serde_json::to_string_pretty(&schema).expect("a JSON value prints");
    text.push('\n');
    text
}

#[test]
fn the_committed_schema_of_the_websocket_messages_is_the_servers() {
    let want = schema_text();
    let path = schema_path();
    if std::env::var_os("RELAY_BLESS").is_some_and(|v| v != "0") {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        eprintln!(
            "wrote {SCHEMA_FILE}; now regenerate the pages' types: `npm ci && npm run types` in web/"
        );
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    // The first line that differs, to say what changed without printing two whole schemas.
    let (line, (had, wanted)) = have
        .lines()
        .chain(std::iter::repeat(""))
        .zip(want.lines().chain(std::iter::repeat("")))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map_or((0, ("", "")), |(i, pair)| (i + 1, pair));
    panic!(
        "{SCHEMA_FILE} is not the schema of relay::serve::wire::ServerMessage: a WebSocket \
         message changed, and the pages' types come from that file.\n\
         First difference, line {line}:\n  committed: {had}\n  server:    {wanted}\n\
         To regenerate it, run\n  RELAY_BLESS=1 cargo test -p relay --test web_contract\n\
         then in web/: `npm ci && npm run types` (the TypeScript declarations) and \
         `npm run check` (which pages the change breaks). Commit the schema and the declarations."
    );
}
