//! Every route, declared once: the router and the OpenAPI document are both built from this
//! table, so the document cannot miss a route, and what it says a route takes and gives is
//! the Rust type the handler reads or answers.

use super::audit::{AuditQuery, audit, audit_all};
use super::eboards::{
    AssignBody, Assigned, Continued, Forgotten, TurnBody, assign_eboard, continue_from_board,
    forget_eboard, list_eboards,
};
use super::evals::{AnswerBody, EvalTask, NextQuery, Taken, answer_position, next_position};
use super::games::{
    EditDone, GameAnswer, MoveBody, PlyBody, ResultBody, confirm_result, get_game, replace_game,
    replace_move, set_result, truncate,
};
use super::incidents::{Ruled, RulingBody, game_record, open_illegal_moves, rule};
use super::ops::{HealthAnswer, health, metrics, openapi, ws_messages_schema};
use super::pairings::{PairingsBody, PairingsSet, put_pairings};
use super::pgn::{
    ExportQuery, export_game, export_round, export_tournament, game_pgn, player_pgn, round_pgn,
    tournament_pgn,
};
use super::player::{PlayerAnswer, get_player};
use super::push::{SettleBody, TookVenue, accept_push, settle_clash, take_venue};
use super::record::{IllegalMoveView, Record};
use super::rounds::{
    Changes, RoundBody, Since, create_round, edit_round, get_round, round_changes,
};
use super::sources::{SourceBody, Stopped, add_source, list_sources, remove_source};
use super::standings::{
    KnownCode, RoundQuery, StandingsAnswer, crosstable_csv, get_ranking, get_standings,
    list_tiebreaks, standings_csv,
};
use super::state::AppState;
use super::tournaments::{
    Created, TournamentBody, create_tournament, edit_tournament, get_tournament, list_tournaments,
};
use super::trf::{
    BoardBody, Renumbered, create_from_trf, get_trf, list_players, list_teams, put_trf, renumber,
};
use super::typed::{
    OperatorBody, OperatorToken, TakebackBody, TypedDone, TypedMoveBody, create_operator,
    get_typed, post_move, take_back,
};
use super::ws::{WsQuery, game_socket, round_socket};
use crate::serve::views::{EboardView, RoundView};
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use relay_store::{
    AuditEntry, AuditRecord, PushBatch, PushReply, RankingTerms, RoundInfo, TournamentInfo,
    TournamentPlayer, TournamentTeam, TrfImported,
};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

/// A schema, made by the generator the document is built with (so shared types are written
/// once, under `components/schemas`).
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// `T`'s schema, or a reference to it.
fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// `T`'s own schema, never a reference: a query's fields are listed one by one.
fn fields<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    T::json_schema(g)
}

/// Who may call a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Public,
    /// The admin token ([`super::extract::Admin`]).
    Admin,
    /// The push token ([`super::extract::Pusher`]).
    Push,
    /// The evaluation token ([`super::extract::EvalWorker`]).
    Worker,
    /// An operator token for the game's board, or the admin token
    /// ([`super::extract::Entrant`]).
    Entrant,
}

/// What a route's request carries.
#[derive(Clone, Copy, Debug)]
pub enum Takes {
    Nothing,
    Json(SchemaFn),
    /// A game as PGN text.
    Pgn,
    /// JSON, or PGN whose tags carry the same.
    JsonOrPgn(SchemaFn),
    /// A FIDE Tournament Report File (TRF16, TRF-2026, TRF(x)) as the pairing program wrote it.
    Trf,
}

/// What a route answers when it succeeds.
#[derive(Clone, Copy, Debug)]
pub enum Gives {
    /// 200 with JSON.
    Json(SchemaFn),
    /// 201 with JSON: what was made.
    Created(SchemaFn),
    /// 200 with PGN text, or 304 when `If-None-Match` names its ETag.
    Pgn,
    /// 200 with a file in the format asked for.
    File,
    /// 200 with the Prometheus (OpenMetrics) text format.
    Text,
    /// 200 with a TRF16 file.
    Trf,
    /// 101: the connection becomes a WebSocket.
    Socket,
}

/// One route: how it is served and how the document describes it.
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    pub access: Access,
    /// The query string's fields, if it has any.
    pub query: Option<SchemaFn>,
    pub takes: Takes,
    pub gives: Gives,
    pub handler: MethodRouter<AppState>,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("method", &self.method)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Route {
    fn new(
        method: &'static str,
        path: &'static str,
        handler: MethodRouter<AppState>,
        summary: &'static str,
        gives: Gives,
    ) -> Route {
        Route {
            method,
            path,
            summary,
            access: Access::Public,
            query: None,
            takes: Takes::Nothing,
            gives,
            handler,
        }
    }

    fn admin(self) -> Route {
        Route {
            access: Access::Admin,
            ..self
        }
    }

    fn push(self) -> Route {
        Route {
            access: Access::Push,
            ..self
        }
    }

    fn worker(self) -> Route {
        Route {
            access: Access::Worker,
            ..self
        }
    }

    fn entrant(self) -> Route {
        Route {
            access: Access::Entrant,
            ..self
        }
    }

    fn takes(self, takes: Takes) -> Route {
        Route { takes, ..self }
    }

    fn query<T: JsonSchema>(self) -> Route {
        Route {
            query: Some(fields::<T>),
            ..self
        }
    }
}

/// A route: its method (also the axum router of that method), path, handler, summary and
/// success answer.
macro_rules! route {
    ($method:ident, $path:literal, $handler:expr, $summary:expr, $gives:expr $(,)?) => {
        Route::new(
            stringify!($method),
            $path,
            $method($handler),
            $summary,
            $gives,
        )
    };
}

fn json<T: JsonSchema>() -> Gives {
    Gives::Json(schema::<T>)
}

fn body<T: JsonSchema>() -> Takes {
    Takes::Json(schema::<T>)
}

pub fn routes() -> Vec<Route> {
    vec![
        route!(get, "/health", health,
            "Store and board health (503 while the database is unavailable)",
            json::<HealthAnswer>()),
        route!(get, "/metrics", metrics,
            "Counters, gauges and histograms (group commit, judgement to publication, publication to a spectator) in the Prometheus (OpenMetrics) text format",
            Gives::Text),
        route!(get, "/api/openapi.json", openapi, "This document", json::<Value>()),
        route!(get, "/api/ws-messages.schema.json", ws_messages_schema,
            "JSON Schema of every message the WebSockets send (`type` names the message)",
            json::<Value>()),
        route!(get, "/api/tournaments", list_tournaments,
            "Tournaments with their rounds",
            json::<Vec<TournamentInfo>>()),
        route!(post, "/api/tournaments", create_tournament,
            "Create a tournament",
            Gives::Created(schema::<Created>))
        .admin()
        .takes(body::<TournamentBody>()),
        route!(get, "/api/tournaments/{id}", get_tournament,
            "One tournament with its rounds",
            json::<TournamentInfo>()),
        route!(patch, "/api/tournaments/{id}", edit_tournament,
            "Edit a tournament (name, site, time control, delay)",
            json::<TournamentInfo>())
        .admin()
        .takes(body::<TournamentBody>()),
        route!(post, "/api/tournaments/trf", create_from_trf,
            "Create a tournament from a pairing program's TRF (players, rounds, pairings, results, byes, teams); the body is the file",
            Gives::Created(schema::<TrfImported>))
        .admin()
        .takes(Takes::Trf),
        route!(put, "/api/tournaments/{id}/trf", put_trf,
            "Update a tournament from its pairing program's newer TRF: new rounds and pairings appear, what boards recorded stays; 409 naming the board when the file would change a game that has moves",
            json::<TrfImported>())
        .admin()
        .takes(Takes::Trf),
        route!(get, "/api/tournaments/{id}/trf", get_trf,
            "The tournament as TRF16 with every result relay has, for the pairing program (409 when it was not made from a TRF)",
            Gives::Trf)
        .admin(),
        route!(get, "/api/tournaments/{id}/players", list_players,
            "The players: start rank, name, title, rating, federation, FIDE id, team, points",
            json::<Vec<TournamentPlayer>>()),
        route!(get, "/api/tournaments/{id}/standings", get_standings,
            "Standings after a round (?round=N; default the last with a result): players by rank with points, each tie-break in the order of `tiebreaks` (FIDE C.07), games and each round's cell; teams by rank in a team event. The public counts a result once its round's delay has passed; computed at most once a second",
            json::<StandingsAnswer>())
        .query::<RoundQuery>(),
        route!(get, "/api/tournaments/{id}/standings.csv", standings_csv,
            "The standings as CSV (?round=N)",
            Gives::Text)
        .query::<RoundQuery>(),
        route!(get, "/api/tournaments/{id}/crosstable.csv", crosstable_csv,
            "The crosstable as CSV: per round the opponent's rank, colour and result (`12w1`), or a bye's letter (?round=N)",
            Gives::Text)
        .query::<RoundQuery>(),
        route!(get, "/api/tournaments/{id}/ranking", get_ranking,
            "How the tournament is ranked, as set: tie-break codes, FIDE edition, scoring, round robin, photos, spoiler-free default",
            json::<RankingTerms>()),
        route!(get, "/api/tournaments/{id}/players/{start_rank}", get_player,
            "A player's page: their standings line, every game with opponent, result and link, performance, K and rating change",
            json::<PlayerAnswer>()),
        route!(get, "/api/tournaments/{id}/players/{start_rank}/pgn", player_pgn,
            "A player's games of the tournament as PGN",
            Gives::Pgn),
        route!(get, "/api/tiebreaks", list_tiebreaks,
            "Every tie-break code relay ranks by (TRF-2026 record 202's codes), with its name",
            json::<Vec<KnownCode>>()),
        route!(get, "/api/tournaments/{id}/teams", list_teams,
            "The teams of a team event, with their players in board order",
            json::<Vec<TournamentTeam>>()),
        route!(get, "/api/tournaments/{id}/pgn", tournament_pgn,
            "All games of a tournament as PGN",
            Gives::Pgn),
        route!(post, "/api/tournaments/{id}/rounds", create_round,
            "Create a round",
            Gives::Created(schema::<Created>))
        .admin()
        .takes(body::<RoundBody>()),
        route!(get, "/api/rounds/{id}", get_round,
            "A round with all its games",
            json::<RoundView>()),
        route!(patch, "/api/rounds/{id}", edit_round,
            "Edit a round (delay, final)",
            json::<RoundInfo>())
        .admin()
        .takes(body::<RoundBody>()),
        route!(get, "/api/rounds/{id}/pgn", round_pgn,
            "All games of a round as PGN, by board number",
            Gives::Pgn),
        route!(get, "/api/rounds/{id}/changes", round_changes,
            "Changes of a round after ?since=N",
            json::<Changes>())
        .query::<Since>(),
        route!(get, "/api/rounds/{id}/ws", round_socket,
            "WebSocket: snapshot then deltas of a round (?since=N resumes, ?eboards=1 adds e-board news); messages as in /api/ws-messages.schema.json",
            Gives::Socket)
        .query::<WsQuery>(),
        route!(put, "/api/rounds/{id}/pairings", put_pairings,
            "Load pairings (JSON list, or PGN whose tags give the players per board)",
            json::<PairingsSet>())
        .admin()
        .takes(Takes::JsonOrPgn(schema::<PairingsBody>)),
        route!(put, "/api/rounds/{id}/boards/{board_no}", assign_eboard,
            "Put an e-board (by serial) on a board number",
            json::<Assigned>())
        .admin()
        .takes(body::<AssignBody>()),
        route!(get, "/api/games/{id}", get_game,
            "One game: players, moves with clocks, running clock, result",
            json::<GameAnswer>()),
        route!(get, "/api/games/{id}/pgn", game_pgn, "One game as PGN", Gives::Pgn),
        route!(get, "/api/games/{id}/ws", game_socket,
            "WebSocket: snapshot then deltas of one game (?since=N resumes); messages as in /api/ws-messages.schema.json",
            Gives::Socket)
        .query::<WsQuery>(),
        route!(post, "/api/games/{id}/board", renumber,
            "Give a game another board number of its round (the game there takes this one's); 409 while an e-board sits on either",
            json::<Renumbered>())
        .admin()
        .takes(body::<BoardBody>()),
        route!(put, "/api/games/{id}/pgn", replace_game,
            "Replace the whole game from an uploaded PGN",
            json::<EditDone>())
        .admin()
        .takes(Takes::Pgn),
        route!(post, "/api/games/{id}/result", set_result,
            "Set a result: confirmed with the admin token; with an operator token for the game's board, the game's result until an arbiter confirms it",
            json::<EditDone>())
        .entrant()
        .takes(body::<ResultBody>()),
        route!(post, "/api/rounds/{id}/operators", create_operator,
            "Hand out an operator token: it enters the moves, takebacks and results of the boards given (of this round) and nothing else",
            Gives::Created(schema::<OperatorToken>))
        .admin()
        .takes(body::<OperatorBody>()),
        route!(get, "/api/games/{id}/moves", get_typed,
            "The game live, for its move-entry page (an operator token for its board, or the admin token)",
            json::<crate::serve::views::GameView>())
        .entrant(),
        route!(post, "/api/rounds/{id}/sources", add_source,
            "Poll a PGN URL for the round's games (another relay's round, DGT LiveChess Cloud, a Lichess round, a file), optionally for some boards only: its moves, clocks and results fill the boards without e-boards; a game an e-board plays is never overwritten (a clash)",
            Gives::Created(schema::<crate::serve::sources::SourceState>))
        .admin()
        .takes(body::<SourceBody>()),
        route!(get, "/api/rounds/{id}/sources", list_sources,
            "The round's PGN sources and what their polls found: last poll and status, games read and placed, moves given, errors, clashes, games no board took",
            json::<Vec<crate::serve::sources::SourceState>>())
        .admin(),
        route!(delete, "/api/rounds/{id}/sources/{source}", remove_source,
            "Stop polling a PGN source (the moves it gave stay)",
            json::<Stopped>())
        .admin(),
        route!(post, "/api/games/{id}/moves", post_move,
            "A move typed for a board without an e-board (SAN or UCI, the ply it is for, the clock if read): stored and announced as a board's move; the same move resent for its ply is done already, another move at a ply played is 409",
            json::<TypedDone>())
        .entrant()
        .takes(body::<TypedMoveBody>()),
        route!(post, "/api/games/{id}/takeback", take_back,
            "Take back the last move of a game typed for a board without an e-board (a resend once it is gone is done already)",
            json::<TypedDone>())
        .entrant()
        .takes(body::<TakebackBody>()),
        route!(post, "/api/games/{id}/confirm", confirm_result,
            "Confirm the proposed or current result",
            json::<EditDone>())
        .admin(),
        route!(post, "/api/games/{id}/truncate", truncate,
            "Remove the moves from ply N on",
            json::<EditDone>())
        .admin()
        .takes(body::<PlyBody>()),
        route!(post, "/api/games/{id}/move", replace_move,
            "Replace the move at ply N (later moves kept while legal)",
            json::<EditDone>())
        .admin()
        .takes(body::<MoveBody>()),
        route!(get, "/api/audit", audit_all,
            "The whole audit trail, newest first (?before=ID&limit=N, at most 1000)",
            json::<Vec<AuditRecord>>())
        .admin()
        .query::<AuditQuery>(),
        route!(get, "/api/games/{id}/audit", audit,
            "The audit trail of a game",
            json::<Vec<AuditEntry>>())
        .admin(),
        route!(get, "/api/games/{id}/record", game_record,
            "The arbiter's record of a game: illegal moves completed by a clock press (and presses without a move), each with what the FIDE Laws prescribe in the event's time control, and clock corrections",
            json::<Record>())
        .admin(),
        route!(post, "/api/games/{id}/illegal-moves", rule,
            "Rule on an illegal move: give the result the Laws prescribe (a second one; Termination \"rules infraction\") or dismiss it; in the audit trail either way",
            json::<Ruled>())
        .admin()
        .takes(body::<RulingBody>()),
        route!(get, "/api/rounds/{id}/illegal-moves", open_illegal_moves,
            "The illegal moves of a round's games that no arbiter has ruled on yet (the console's alerts when it opens)",
            json::<Vec<IllegalMoveView>>())
        .admin(),
        route!(get, "/api/eboards", list_eboards,
            "E-boards: port, serial, connected, battery, in sync",
            json::<Vec<EboardView>>()),
        route!(post, "/api/eboards/{serial}/continue", continue_from_board,
            "Go on from the position on the e-board ({\"turn\":\"white\"|\"black\"}): a game joined in the middle, or one the recorder lost",
            json::<Continued>())
        .admin()
        .takes(body::<TurnBody>()),
        route!(get, "/api/tournaments/{id}/export", export_tournament,
            "A tournament's games as a file: ?format=pgn (default), archive (PGN in the standard's archival order), epd (a line per position; &final=1 for final positions only), onebyte (the one-byte move encoding), pgc (PGN standard section 20), cbf (ChessBase CBF) or cbi (the index of that CBF); 422 when a game cannot be held by the format",
            Gives::File)
        .query::<ExportQuery>(),
        route!(get, "/api/rounds/{id}/export", export_round,
            "A round's games as a file: ?format=pgn|archive|epd|onebyte|pgc|cbf|cbi[&final=1]",
            Gives::File)
        .query::<ExportQuery>(),
        route!(get, "/api/games/{id}/export", export_game,
            "A game as a file: ?format=pgn|archive|epd|onebyte|pgc|cbf|cbi[&final=1]",
            Gives::File)
        .query::<ExportQuery>(),
        route!(post, "/api/push", accept_push,
            "A venue relay's batch (a relay started with --push-to; the Bearer token is this relay's --accept-push-token, not the admin token): tournaments, rounds and whole games, applied once",
            json::<PushReply>())
        .push()
        .takes(body::<PushBatch>()),
        route!(post, "/api/games/{id}/take-venue", take_venue,
            "A game an arbiter here changed after the venue's last push: take the venue's version held back, and follow the venue again",
            json::<TookVenue>())
        .admin(),
        route!(post, "/api/push/settle", settle_clash,
            "Two halls' games came for one board of a round (several halls, one event): place the held-back one (its venue's origin and game id, from /health's pushed_from conflicts) on a free board here; it follows its venue there from now on",
            json::<relay_store::Settled>())
        .admin()
        .takes(body::<SettleBody>()),
        route!(post, "/api/eval/next", next_position,
            "An evaluation worker asks for a position (the Bearer token is this relay's --eval-token): 200 with the position and how long to think, or 204 when none came within ?wait_secs (default 20, at most 60); the position is the worker's for its lease, then goes to another",
            json::<EvalTask>())
        .worker()
        .query::<NextQuery>(),
        route!(post, "/api/eval/answer", answer_position,
            "An evaluation worker's verdict on a position it was given: score from White's side (cp or mate), depth, best line (UCI) and engine; kept once for every game that reaches the position",
            json::<Taken>())
        .worker()
        .takes(body::<AnswerBody>()),
        route!(delete, "/api/eboards/{serial}", forget_eboard,
            "Forget a disconnected e-board in the list",
            json::<Forgotten>())
        .admin(),
    ]
}
