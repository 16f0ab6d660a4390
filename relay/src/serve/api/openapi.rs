//! The OpenAPI 3 document, written from the route table: each route's parameters, the body
//! it takes and the answer it gives, their schemas generated from the Rust types the
//! handlers read and answer (under `components/schemas`, referenced with `$ref`), and the
//! refusals each kind of route can give.

use super::error::ErrorBody;
use super::routes::{Access, Gives, Route, SchemaFn, Takes};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

const JSON: &str = "application/json";
const PGN: &str = "application/x-chess-pgn";

/// The schemas of one direction: what clients send is read as serde reads it (fields with a
/// default may be left out), what the relay answers as serde writes it.
struct Schemas(SchemaGenerator);

impl Schemas {
    fn new(settings: SchemaSettings) -> Schemas {
        Schemas(settings.into_generator())
    }

    /// A schema made by `f`, adapted to OpenAPI 3.0 (`nullable` rather than a `null` type, no
    /// `true` schemas) as the shared ones under `components` are.
    fn of(&mut self, f: SchemaFn) -> Value {
        let mut schema = f(&mut self.0);
        for t in self.0.transforms_mut() {
            t.transform(&mut schema);
        }
        schema.to_value()
    }

    fn of_type<T: JsonSchema>(&mut self) -> Value {
        self.of(|g| g.subschema_for::<T>())
    }
}

/// A body's content: each media type with its schema.
fn content(kinds: &[(&str, Value)]) -> Value {
    kinds
        .iter()
        .map(|(kind, schema)| (kind.to_string(), json!({ "schema": schema })))
        .collect::<Map<String, Value>>()
        .into()
}

/// An answer: what it means, and its body if it has one.
fn answer(description: &str, kinds: &[(&str, Value)]) -> Value {
    let mut a = json!({ "description": description });
    if !kinds.is_empty() {
        a["content"] = content(kinds);
    }
    a
}

/// What a path parameter names, from its name and the collection before it.
fn path_parameter(path: &str, name: &str) -> Value {
    let (description, schema) = match name {
        "serial" => (
            "The e-board: its serial number (or `serial@port` for a second one reporting it)"
                .to_string(),
            json!({"type": "string"}),
        ),
        "board_no" => (
            "The board number in the round".to_string(),
            json!({"type": "integer", "format": "uint32", "minimum": 1, "maximum": crate::serve::id::BoardNo::MAX}),
        ),
        _ => {
            let what = path
                .split('/')
                .find_map(|seg| match seg {
                    "tournaments" => Some("tournament"),
                    "rounds" => Some("round"),
                    "games" => Some("game"),
                    _ => None,
                })
                .unwrap_or("item");
            (
                format!("The {what}'s id"),
                json!({"type": "integer", "format": "int64", "minimum": 1}),
            )
        }
    };
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": schema})
}

/// A query's fields as parameters, each with its schema and description.
fn query_parameters(requests: &mut Schemas, f: SchemaFn) -> Vec<Value> {
    let schema = requests.of(f);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, s)| {
            let mut s = s.clone();
            // A query field left out is how a client says "none": `null` is no value here.
            let description = s.as_object_mut().and_then(|o| {
                o.remove("nullable");
                o.remove("description")
            });
            let mut p = json!({
                "name": name,
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": s,
            });
            if let Some(d) = description {
                p["description"] = d;
            }
            p
        })
        .collect()
}

/// One route's operation.
fn operation(r: &Route, requests: &mut Schemas, answers: &mut Schemas, error: &Value) -> Value {
    let refusal = |description: &str| answer(description, &[(JSON, error.clone())]);
    let names: Vec<&str> = r
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect();
    let mut parameters: Vec<Value> = names.iter().map(|n| path_parameter(r.path, n)).collect();
    let mut responses = Map::new();
    // What a 400 may mean here: every reason, not the last one written.
    let mut bad: Vec<&str> = Vec::new();
    let success = match r.gives {
        Gives::Json(f) => ("200", answer("success", &[(JSON, answers.of(f))])),
        Gives::Created(f) => ("201", answer("made", &[(JSON, answers.of(f))])),
        Gives::Pgn => {
            responses.insert(
                "304".into(),
                answer("not modified (If-None-Match names the current ETag)", &[]),
            );
            (
                "200",
                answer("the games", &[(PGN, json!({"type": "string"}))]),
            )
        }
        Gives::File => {
            responses.insert(
                "422".into(),
                refusal("a game cannot be held by the format asked for"),
            );
            let text = json!({"type": "string"});
            let binary = json!({"type": "string", "format": "binary"});
            let files = [
                (PGN, text.clone()),
                ("text/plain", text),
                ("application/octet-stream", binary),
            ];
            ("200", answer("the file (its type follows ?format)", &files))
        }
        Gives::Text => (
            "200",
            answer(
                "the counters, gauges and histograms",
                &[("application/openmetrics-text", json!({"type": "string"}))],
            ),
        ),
        Gives::Trf => {
            responses.insert(
                "409".into(),
                refusal("the tournament was not made from a pairing program's file"),
            );
            (
                "200",
                answer(
                    "the TRF16 file",
                    &[("text/plain", json!({"type": "string"}))],
                ),
            )
        }
        Gives::Socket => {
            bad.push("not a WebSocket handshake");
            (
                "101",
                answer(
                    "the connection is a WebSocket from here on; its messages are described by /api/ws-messages.schema.json",
                    &[],
                ),
            )
        }
    };
    responses.insert(success.0.into(), success.1);
    if let Some(q) = r.query {
        parameters.extend(query_parameters(requests, q));
        bad.push("a bad query");
    }
    if names.contains(&"board_no") {
        bad.push("a board number out of range");
    }
    if !names.is_empty() {
        responses.insert("404".into(), refusal("unknown id"));
    }
    let body = match r.takes {
        Takes::Nothing => None,
        Takes::Json(f) => Some(vec![(JSON, requests.of(f))]),
        Takes::Pgn => Some(vec![(PGN, json!({"type": "string"}))]),
        Takes::JsonOrPgn(f) => Some(vec![
            (JSON, requests.of(f)),
            (PGN, json!({"type": "string"})),
        ]),
        Takes::Trf => Some(vec![("text/plain", json!({"type": "string"}))]),
    };
    if body.is_some() {
        bad.push("malformed input");
        // axum's own answer, not JSON, when the body is over the limit.
        responses.insert("413".into(), answer("body too large", &[]));
    }
    if !bad.is_empty() {
        let reasons = format!("{}; the message names the problem", bad.join(", or "));
        responses.insert("400".into(), refusal(&reasons));
    }
    match r.access {
        Access::Public => {}
        Access::Admin => {
            responses.insert("401".into(), refusal("no token"));
            responses.insert("403".into(), refusal("wrong token"));
            responses.insert(
                "503".into(),
                refusal("arbiter actions are switched off (no admin token is configured)"),
            );
        }
        Access::Push => {
            responses.insert("401".into(), refusal("no token"));
            responses.insert(
                "403".into(),
                refusal("wrong token, or this relay takes no pushes"),
            );
        }
        Access::Worker => {
            responses.insert("401".into(), refusal("no token"));
            responses.insert(
                "403".into(),
                refusal("wrong token, or this relay takes no evaluation workers"),
            );
        }
        Access::Entrant => {
            responses.insert("401".into(), refusal("no token"));
            responses.insert(
                "403".into(),
                refusal("wrong token, or an operator token for other boards"),
            );
            responses.insert(
                "503".into(),
                refusal("arbiter actions are switched off (no admin token is configured)"),
            );
        }
    }
    let mut op = json!({
        "summary": r.summary,
        "operationId": format!("{}{}", r.method, r.path.replace(['/', '{', '}', '.'], "_")),
        "parameters": parameters,
        "responses": responses,
    });
    if r.access != Access::Public {
        op["security"] = json!([{"bearer": []}]);
    }
    if let Some(kinds) = body {
        op["requestBody"] = json!({"required": true, "content": content(&kinds)});
    }
    op
}

/// Where the schemas of what is read are put while the document is written; [`merge`] moves
/// them under `components/schemas`.
const READ: &str = "#/components/read/";
const SCHEMAS: &str = "#/components/schemas/";

/// Every `$ref` in `v` passed through `f`.
fn rewrite_refs(v: &mut Value, f: &impl Fn(&str) -> Option<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    Value::String(r) if k == "$ref" => {
                        if let Some(new) = f(r) {
                            *r = new;
                        }
                    }
                    _ => rewrite_refs(x, f),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rewrite_refs(x, f)),
        _ => {}
    }
}

/// Whether `v` refers to any of `names` among the read schemas.
fn refers_to(v: &Value, names: &BTreeSet<String>) -> bool {
    match v {
        Value::Object(o) => o.iter().any(|(k, x)| match x {
            Value::String(r) if k == "$ref" => r
                .strip_prefix(READ)
                .is_some_and(|name| names.contains(name)),
            _ => refers_to(x, names),
        }),
        Value::Array(a) => a.iter().any(|x| refers_to(x, names)),
        _ => false,
    }
}

/// The schemas of what is written and of what is read, as one map, and the document's
/// references to read schemas pointed at it. A type read as it is written has one schema;
/// also read otherwise (serde reads a missing `Option` field as `None`, but always writes it)
/// gets a second, `{name}Input`, as does every such type holding one.
fn merge(written: Map<String, Value>, read: Map<String, Value>, doc: &mut Value) -> Value {
    let as_written =
        |name: &str| -> Option<String> { name.strip_prefix(READ).map(|n| format!("{SCHEMAS}{n}")) };
    let mut differs: BTreeSet<String> = read
        .iter()
        .filter(|(name, schema)| {
            let mut s = (*schema).clone();
            rewrite_refs(&mut s, &as_written);
            written.get(*name).is_some_and(|w| *w != s)
        })
        .map(|(name, _)| name.clone())
        .collect();
    loop {
        let more: Vec<String> = read
            .iter()
            .filter(|(name, s)| {
                written.contains_key(*name) && !differs.contains(*name) && refers_to(s, &differs)
            })
            .map(|(name, _)| name.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        differs.extend(more);
    }
    let to_final = |r: &str| -> Option<String> {
        let name = r.strip_prefix(READ)?;
        Some(if differs.contains(name) {
            format!("{SCHEMAS}{name}Input")
        } else {
            format!("{SCHEMAS}{name}")
        })
    };
    rewrite_refs(doc, &to_final);
    let mut schemas = written;
    for (name, mut schema) in read {
        rewrite_refs(&mut schema, &to_final);
        if differs.contains(&name) {
            schemas.insert(format!("{name}Input"), schema);
        } else {
            schemas.entry(name).or_insert(schema);
        }
    }
    schemas.into()
}

/// The document of `routes`.
pub fn document(routes: &[Route]) -> Value {
    let read = SchemaSettings::openapi3().for_deserialize().with(|s| {
        s.definitions_path = READ
            .trim_start_matches('#')
            .trim_end_matches('/')
            .to_string()
            .into()
    });
    let mut requests = Schemas::new(read);
    let mut answers = Schemas::new(SchemaSettings::openapi3().for_serialize());
    let error = answers.of_type::<ErrorBody>();
    let mut paths = Map::new();
    for r in routes {
        let op = operation(r, &mut requests, &mut answers, &error);
        let entry = paths.entry(r.path.to_string()).or_insert_with(|| json!({}));
        entry[r.method] = op;
    }
    let mut paths = Value::Object(paths);
    let written = answers.0.take_definitions(true);
    let read = requests.0.take_definitions(true);
    let schemas = merge(written, read, &mut paths);
    json!({
        "openapi": "3.0.3",
        "info": {"title": "relay", "version": env!("CARGO_PKG_VERSION"), "description": "Live-broadcast relay for DGT electronic chess boards", "license": {"name": "GPL-3.0-or-later"}},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::routes::routes;
    use super::*;

    /// Every `$ref` in `v`.
    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    match (k.as_str(), x.as_str()) {
                        ("$ref", Some(r)) => out.push(r),
                        _ => refs(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_route_is_described_with_its_bodies_and_refusals() {
        let table = routes();
        let doc = document(&table);
        for r in &table {
            let op = &doc["paths"][r.path][r.method];
            assert!(op.is_object(), "{} {} is missing", r.method, r.path);
            assert_eq!(op["summary"], r.summary);
            assert_eq!(
                op.get("security").is_some(),
                r.access != Access::Public,
                "{}",
                r.path
            );
            let codes: Vec<&String> = op["responses"]
                .as_object()
                .expect("responses")
                .keys()
                .collect();
            assert!(
                codes.iter().any(|c| c.starts_with('2') || *c == "101"),
                "{} {}: no success answer",
                r.method,
                r.path
            );
            if r.path.contains('{') {
                assert!(
                    op["responses"]["404"].is_object(),
                    "{} {}",
                    r.method,
                    r.path
                );
            }
        }
        let body =
            &doc["paths"]["/api/tournaments"]["post"]["requestBody"]["content"][JSON]["schema"];
        assert_eq!(
            body["$ref"], "#/components/schemas/TournamentBody",
            "{body}"
        );
        let made = &doc["paths"]["/api/tournaments"]["post"]["responses"]["201"];
        assert_eq!(
            made["content"][JSON]["schema"]["$ref"],
            "#/components/schemas/Created"
        );
        let round = &doc["paths"]["/api/rounds/{id}"]["get"]["responses"]["200"];
        assert_eq!(
            round["content"][JSON]["schema"]["$ref"],
            "#/components/schemas/RoundView"
        );
        let schemas = &doc["components"]["schemas"];
        assert!(schemas["TournamentBody"]["properties"]["delay_secs"].is_object());
        assert!(schemas["PushBatch"]["properties"]["games"].is_object());
        let since = &doc["paths"]["/api/rounds/{id}/changes"]["get"]["parameters"];
        assert!(
            since
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["name"] == "since" && p["in"] == "query")),
            "{since}"
        );
    }

    #[test]
    fn every_reference_resolves_and_a_type_read_otherwise_has_a_schema_of_its_own() {
        let doc = document(&routes());
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(!found.is_empty());
        for r in found {
            let name = r.strip_prefix(SCHEMAS).expect("a component");
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "{r} is not defined"
            );
        }
        let schemas = &doc["components"]["schemas"];
        // Written with every field; read (in a venue's push) with the optional ones left out.
        let required = |name: &str| schemas[name]["required"].as_array().map(Vec::len);
        assert!(
            required("RoundInfo") > required("RoundInfoInput"),
            "{schemas}"
        );
        let push = &schemas["PushBatch"]["properties"]["tournaments"]["items"]["$ref"];
        assert!(schemas["PushBatchInput"].is_null(), "read only: one name");
        assert_eq!(push, "#/components/schemas/TournamentInfoInput");
        // Read as it is written: once.
        assert!(schemas["StoredMove"].is_object());
        assert!(schemas["StoredMoveInput"].is_null());
    }
}
