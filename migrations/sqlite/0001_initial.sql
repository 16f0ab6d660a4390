-- relay schema 1 (SQLite). Times are milliseconds since the Unix epoch.
CREATE TABLE tournaments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    site TEXT,
    start_date TEXT,
    end_date TEXT,
    time_control TEXT,
    delay_secs INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE TABLE rounds (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    number TEXT NOT NULL,
    date TEXT,
    delay_secs INTEGER,
    final INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tournament_id, number)
);
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    round_id INTEGER NOT NULL REFERENCES rounds(id),
    board_no INTEGER NOT NULL,
    white TEXT, white_title TEXT, white_elo INTEGER, white_fide_id INTEGER, white_fed TEXT,
    black TEXT, black_title TEXT, black_elo INTEGER, black_fide_id INTEGER, black_fed TEXT,
    result TEXT NOT NULL DEFAULT '*',
    termination TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    start_fen TEXT,
    chess960 INTEGER NOT NULL DEFAULT 0,
    UNIQUE (round_id, board_no)
);
CREATE TABLE eboards (
    serial TEXT PRIMARY KEY,
    port TEXT,
    last_seen INTEGER
);
CREATE TABLE assignments (
    round_id INTEGER NOT NULL REFERENCES rounds(id),
    board_no INTEGER NOT NULL,
    serial TEXT NOT NULL REFERENCES eboards(serial),
    PRIMARY KEY (round_id, board_no)
);
CREATE TABLE moves (
    game_id INTEGER NOT NULL REFERENCES games(id),
    ply INTEGER NOT NULL,
    san TEXT NOT NULL,
    uci TEXT NOT NULL,
    clk_ms INTEGER,
    emt_ms INTEGER,
    accepted_at INTEGER NOT NULL,
    fen_after TEXT NOT NULL,
    PRIMARY KEY (game_id, ply)
);
CREATE TABLE raw_log (
    id INTEGER PRIMARY KEY,
    port TEXT NOT NULL,
    serial TEXT,
    received_at INTEGER NOT NULL,
    bytes BLOB NOT NULL
);
CREATE INDEX raw_log_port_time ON raw_log (port, received_at);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    game_id INTEGER,
    detail TEXT NOT NULL
);
CREATE TABLE changes (
    round_id INTEGER NOT NULL REFERENCES rounds(id),
    seq INTEGER NOT NULL,
    game_id INTEGER,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (round_id, seq)
);
