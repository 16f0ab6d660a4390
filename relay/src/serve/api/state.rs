//! What the handlers are given: the router's state holds the service's handles, and each
//! handler takes only the parts it uses (`State<Store>`, `State<Lookup>`, …) through
//! [`FromRef`], so its signature says what it can touch.

use super::standings::StandingsCache;
use crate::serve::jobs::{ToHall, ToWriter};
use crate::serve::live::Boards;
use crate::serve::lookup::Lookup;
use crate::serve::publish::Publisher;
use crate::serve::service::{Shared, Tokens};
use axum::body::Bytes;
use axum::extract::FromRef;
use relay_store::Store;
use std::sync::Arc;

/// The OpenAPI document as JSON text, built from the route table once, when the router is,
/// and handed to the route that serves it (which is in the table itself: the handler cannot
/// build it).
#[derive(Clone, Debug)]
pub struct OpenApiDocument(pub Bytes);

/// The router's state: the service's handles and the OpenAPI document.
#[derive(Clone, Debug)]
pub struct AppState {
    shared: Arc<Shared>,
    openapi: OpenApiDocument,
    /// The standings computed in the last second, for everyone asking.
    standings: Arc<StandingsCache>,
}

impl AppState {
    pub fn new(shared: Arc<Shared>, openapi: OpenApiDocument) -> AppState {
        AppState {
            shared,
            openapi,
            standings: Arc::default(),
        }
    }
}

/// Every handle a handler may take, each cloned out of the state (they are handles: a clone
/// is a reference count).
macro_rules! part {
    ($t:ty, |$s:ident| $get:expr) => {
        impl FromRef<AppState> for $t {
            fn from_ref($s: &AppState) -> $t {
                $get
            }
        }
    };
}

part!(Arc<Shared>, |s| s.shared.clone());
part!(OpenApiDocument, |s| s.openapi.clone());
part!(Arc<StandingsCache>, |s| s.standings.clone());
part!(Store, |s| s.shared.store.clone());
part!(Lookup, |s| s.shared.lookup.clone());
part!(Publisher, |s| s.shared.publisher.clone());
part!(Arc<Boards>, |s| s.shared.boards.clone());
part!(ToHall, |s| s.shared.hall.clone());
part!(ToWriter, |s| s.shared.writer.clone());
part!(Tokens, |s| s.shared.tokens());
