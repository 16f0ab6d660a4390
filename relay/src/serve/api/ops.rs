//! Health, Prometheus counters and the OpenAPI document.

use super::*;

pub(super) async fn health(State(s): State<AppState>) -> Response {
    let ok = s.store.ping().await;
    let h = &s.health;
    let eboards = s.boards.eboards();
    let lost: Vec<&str> = eboards
        .iter()
        .filter(|e| !e.connected)
        .map(|e| e.serial.as_str())
        .collect();
    let out_of_sync: Vec<&str> = eboards
        .iter()
        .filter(|e| !e.in_sync)
        .map(|e| e.serial.as_str())
        .collect();
    let pending = h.pending_writes.load(Ordering::Relaxed);
    let writer_ok = h.store_ok.load(Ordering::Relaxed);
    let down_since = h.store_down_since_ms.load(Ordering::Relaxed);
    let upstream = s.targets.all();
    // Venues pushing here, with the games whose venue version is held back.
    let pushed_from = match s.push_token() {
        Some(_) => s.store.mirror_sources().await.ok(),
        None => None,
    };
    let body = json!({
        "status": if ok && writer_ok { "ok" } else { "degraded" },
        "store": {
            "backend": s.store.backend(),
            "reachable": ok,
            "writes_ok": writer_ok,
            "down_since_ms": (down_since != 0).then_some(down_since),
            "last_error": h.last_store_error.lock().clone(),
            "pending_writes": pending,
        },
        "boards": {
            "eboards": eboards.len(),
            "connected": eboards.iter().filter(|e| e.connected).count(),
            "lost": lost,
            "out_of_sync": out_of_sync,
        },
        "uptime_s": s.uptime_s(),
        "instance": crate::serve::instance::instance_name(),
        "ports": s.claims.get().map(|c| c.ports()).unwrap_or_default().iter()
            .map(|(port, held)| json!({"port": port, "read_here": held}))
            .collect::<Vec<_>>(),
        "upstream": upstream,
        "pushed_from": pushed_from,
    });
    let code = if ok && writer_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, axum::Json(body)).into_response()
}

pub(super) async fn metrics(State(s): State<AppState>) -> Response {
    let text = s.metrics.render(&s.health, &s.boards.eboards());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

pub(super) async fn ws_messages_schema() -> Response {
    axum::Json(crate::serve::wire::schema()).into_response()
}

pub(super) async fn openapi() -> Response {
    axum::Json(openapi_document()).into_response()
}

/// The OpenAPI 3 document, built from [`routes`].
pub fn openapi_document() -> Value {
    let mut paths = serde_json::Map::new();
    for r in routes() {
        let params: Vec<Value> = r
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": if name == "serial" { "string" } else { "integer" }}}))
            .collect();
        let mut responses = serde_json::Map::new();
        responses.insert(
            "200".into(),
            json!({"description": "success", "content": {r.produces: {}}}),
        );
        if !params.is_empty() {
            responses.insert("404".into(), json!({"description": "unknown id"}));
        }
        if matches!(r.method, "post" | "put" | "patch") {
            responses.insert(
                "400".into(),
                json!({"description": "malformed input; the message names the problem"}),
            );
            responses.insert("413".into(), json!({"description": "body too large"}));
        }
        if r.admin {
            responses.insert("401".into(), json!({"description": "no token"}));
            responses.insert("403".into(), json!({"description": "wrong token"}));
        }
        if r.path.ends_with("/pgn") && r.method == "get" {
            responses.insert(
                "304".into(),
                json!({"description": "not modified (If-None-Match)"}),
            );
        }
        let mut op = json!({
            "summary": r.summary,
            "operationId": format!("{}{}", r.method, r.path.replace(['/', '{', '}', '.'], "_")),
            "parameters": params,
            "responses": responses,
        });
        if r.admin {
            op["security"] = json!([{"bearer": []}]);
        }
        if matches!(r.method, "post" | "put" | "patch") {
            op["requestBody"] =
                json!({"content": {if r.path.ends_with("/pgn") { PGN } else { JSON }: {}}});
        }
        let entry = paths.entry(r.path.to_string()).or_insert_with(|| json!({}));
        entry[r.method] = op;
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "relay", "version": env!("CARGO_PKG_VERSION"), "description": "Live-broadcast relay for DGT electronic chess boards", "license": {"name": "GPL-3.0-or-later"}},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    })
}
