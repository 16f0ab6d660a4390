//! Rules of the code's shape that a change could break quietly, checked on the source itself:
//! the modules of each crate import one another without a circle, and no file of any crate
//! grows past what a reader can hold (ARCHITECTURE.md, "The service's layers").
//!
//! The import graph is read from the `use` declarations and the paths written inline
//! (`crate::`, `super::`, `self::`, or through a child module) of every file. Each file is
//! one module; a test module at the end of a file is left out, as tests may reach anywhere.
//! A path that ends in a module's own items is an edge to that module, so a child that uses
//! what its parent's `mod.rs` defines while the parent uses the child is a circle too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, by their source folder (relative to the workspace root).
const CRATES: &[&str] = &[
    "boards/src",
    "emulator/src",
    "relay/core/src",
    "relay/store/src",
    "relay/src",
];

/// A file of any crate may hold this many lines before its tests (files of tests only are
/// not counted: see `test_only`).
const MAX_LINES: usize = 800;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's module path within its crate: `serve/api/ws.rs` → `serve::api::ws`, `serve/mod.rs`
/// → `serve`, `lib.rs`/`main.rs` → the crate root (empty). Binaries under `bin/` and benches
/// are crates of their own and are not read.
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    match parts.last().map(String::as_str) {
        Some("mod") => {
            parts.pop();
        }
        Some("lib" | "main") if parts.len() == 1 => parts.clear(),
        _ => {}
    }
    Some(parts)
}

/// A file's text before its test module (the whole text when it has none).
fn before_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i])
}

/// The file's text without comments, string contents and its test module.
fn code_of(text: &str) -> String {
    let text = before_tests(text);
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            // A string: its contents are not code (raw strings with quotes inside are not
            // used in paths' neighbourhoods; a stray one only hides text, never adds paths).
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A character literal such as '{' must not open a use group.
            i += 3;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Every path a `use` declaration names, its `{...}` groups expanded.
fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = format!("{prefix}{}", &tree[..open]);
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &head, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &head, out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        out.push(format!("{prefix}{path}"));
    }
}

/// The paths a module's code names: its `use` trees expanded, and every `crate::`,
/// `super::` and `self::` path written inline.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        expand(&rest[..end].replace(['\n', ' '], ""), "", &mut out);
        rest = &rest[end..];
    }
    let b = code.as_bytes();
    // Every other path written inline (`child::item`, `sibling::Type::new`): `target` keeps
    // those whose first segment is a child module and drops the rest (`std::`, other
    // crates, `Self::`, enum variants).
    let mut from = 0;
    while let Some(i) = code[from..].find("::") {
        let at = from + i;
        from = at + 2;
        let start = code[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |k| k + 1);
        if start == at || (start > 0 && b[start - 1] == b':') {
            continue;
        }
        let end = code[at..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(code.len(), |e| at + e);
        out.push(code[start..end].trim_end_matches(':').to_string());
    }
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0
                && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b':')
            {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            out.push(code[at..end].trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path from `module` leads to (the deepest module it names), if inside the
/// crate.
fn target(module: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut at, rest): (Vec<String>, &[&str]) = match segs.first().copied() {
        Some("crate") => (Vec::new(), &segs[1..]),
        Some("self") => (module.to_vec(), &segs[1..]),
        Some("super") => {
            let mut at = module.to_vec();
            let mut k = 0;
            while segs.get(k) == Some(&"super") {
                at.pop();
                k += 1;
            }
            (at, &segs[k..])
        }
        // A path through a child module, written without `self::`.
        Some(first) => {
            let mut child = module.to_vec();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            (module.to_vec(), &segs[..])
        }
        None => return None,
    };
    for s in rest {
        let mut next = at.clone();
        next.push((*s).to_string());
        if modules.contains(&next) {
            at = next;
        } else {
            break;
        }
    }
    Some(at)
}

/// Each module's imports of other modules of the same crate.
fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut code = BTreeMap::new();
    for f in files {
        if let Some(m) = module_of(src, &f) {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            code.insert(m, code_of(&text));
        }
    }
    let modules: BTreeSet<Vec<String>> = code.keys().cloned().collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, text) in &code {
        let e = edges.entry(m.clone()).or_default();
        for p in paths_in(text) {
            if let Some(t) = target(m, &p, &modules)
                && t != *m
                // A module's own children are below it: naming them is not an edge up.
                && !(t.len() > m.len() && t.starts_with(m) && p.starts_with("self"))
            {
                e.insert(t);
            }
        }
    }
    edges
}

/// The circles of a graph: its strongly connected parts of more than one module (Tarjan).
fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.g.get(v).into_iter().flatten() {
                let Some((w, _)) = self.g.get_key_value(w) else {
                    continue;
                };
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut part = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    part.push(if w.is_empty() {
                        "(root)".to_string()
                    } else {
                        w.join("::")
                    });
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    self.found.push(part);
                }
            }
        }
    }
    let mut w = Walk {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in g.keys() {
        if !w.index.contains_key(v) {
            w.visit(v);
        }
    }
    w.found
}

#[test]
fn no_crate_has_an_import_circle() {
    let root = workspace();
    let mut all = Vec::new();
    for c in CRATES {
        let g = graph(&root.join(c));
        assert!(g.len() > 1, "no modules read under {c}");
        for part in circles(&g) {
            all.push(format!("{c}: {}", part.join(", ")));
        }
    }
    assert!(
        all.is_empty(),
        "modules that import one another in a circle (move what they share below them):\n{}",
        all.join("\n")
    );
}

/// The checker itself: it sees a circle through a parent's own items, and none in a chain.
#[test]
fn the_circle_check_sees_circles() {
    let m = |s: &str| -> Vec<String> {
        s.split("::")
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let modules: BTreeSet<Vec<String>> = [m(""), m("a"), m("a::b"), m("c")].into();
    assert_eq!(target(&m("a::b"), "super::Item", &modules), Some(m("a")));
    assert_eq!(target(&m("a::b"), "crate::c::x", &modules), Some(m("c")));
    assert_eq!(target(&m("a"), "b::Thing", &modules), Some(m("a::b")));
    assert_eq!(target(&m("a"), "std::sync::Arc", &modules), None);
    let inline = paths_in("fn f() { b::thing(); std::mem::take(x); }");
    assert!(inline.iter().any(|p| p == "b::thing"), "{inline:?}");
    assert_eq!(
        inline
            .iter()
            .find_map(|p| target(&m("a"), p, &modules).filter(|t| *t != m("a"))),
        Some(m("a::b"))
    );
    let mut paths = Vec::new();
    expand("super::{a::{B, C}, d as e}", "", &mut paths);
    assert_eq!(paths, ["super::a::B", "super::a::C", "super::d"]);
    let g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = [
        (m("a"), [m("a::b")].into()),
        (m("a::b"), [m("a")].into()),
        (m("c"), [m("a")].into()),
    ]
    .into();
    assert_eq!(circles(&g), vec![vec!["a".to_string(), "a::b".to_string()]]);
    let chain: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> =
        [(m("a"), [m("c")].into()), (m("c"), BTreeSet::new())].into();
    assert!(circles(&chain).is_empty());
}

/// Whether a file holds only tests: a test module of its own file (`tests.rs`) or the
/// test support a parent includes under `#[cfg(test)]` (`testing.rs`).
fn test_only(file: &Path) -> bool {
    file.file_name()
        .is_some_and(|n| n == "tests.rs" || n == "testing.rs")
}

#[test]
fn no_file_of_any_crate_is_longer_than_a_reader_can_hold() {
    let mut files = Vec::new();
    for krate in CRATES {
        rust_files(&workspace().join(krate), &mut files);
    }
    let mut long = Vec::new();
    for f in files.into_iter().filter(|f| !test_only(f)) {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let n = before_tests(&text).lines().count();
        if n > MAX_LINES {
            long.push(format!("{} ({n} lines before its tests)", f.display()));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines: split them by concern:\n{}",
        long.join("\n")
    );
}

/// The store's methods that change games or their moves, results or boards.
const GAME_WRITES: &[&str] = &[
    "commit",
    "commit_one",
    "record_move",
    "truncate_moves",
    "set_result",
    "replace_moves",
    "replace_moves_on",
    "set_pairing",
    "set_pairings",
    "assign",
    "start_game",
    "set_move_clock",
    "renumber_board",
    "import_trf",
    "apply_push",
    "take_held",
    "settle_clash",
];

/// Every file of `relay/src` that may call them (ARCHITECTURE.md, invariant 14): the writer,
/// the routes that change games in one transaction of their own and announce it after, and
/// the command-line tools that fill a store before or beside a service.
const GAME_WRITERS: &[&str] = &[
    "serve/writer/edits.rs",
    "serve/writer/games.rs",
    "serve/writer/flush.rs",
    "serve/writer/group.rs",
    "serve/api/pairings.rs",
    "serve/api/trf.rs",
    "serve/api/push.rs",
    "cli/import.rs",
    "cli/demo.rs",
    "cli/bench/push.rs",
];

#[test]
fn only_the_writer_and_the_named_routes_change_games() {
    let src = workspace().join("relay/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut strays = Vec::new();
    for f in files.into_iter().filter(|f| !test_only(f)) {
        let rel = f
            .strip_prefix(&src)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        // Calls on a store: `store.m(`, `self.store.m(`, `lookup.store\n    .m(`, `store().m(`.
        let code: String = code_of(&text).split_whitespace().collect();
        for m in GAME_WRITES {
            let call = format!(".{m}(");
            let on_store = ["store", "store()"]
                .iter()
                .any(|r| code.contains(&format!("{r}{call}")));
            if on_store && !GAME_WRITERS.contains(&rel.as_str()) {
                strays.push(format!("{rel} calls Store::{m}"));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "games change only through the writer and the routes ARCHITECTURE.md's invariant 14 names; add the file there and here only with a reason:\n{}",
        strays.join("\n")
    );
}

/// The folders whose files are `impl` blocks of one type (the writer's and the hall's state):
/// their files call one another through `self.`, which no import shows.
const ONE_TYPE_FOLDERS: &[&str] = &["serve/writer", "serve/hall"];

#[test]
fn the_files_of_the_writer_and_the_hall_call_one_another_without_a_circle() {
    let src = workspace().join("relay/src");
    for folder in ONE_TYPE_FOLDERS {
        let mut files = Vec::new();
        rust_files(&src.join(folder), &mut files);
        let code: BTreeMap<String, String> = files
            .iter()
            .map(|f| {
                let name = f.file_stem().map(|s| s.to_string_lossy().to_string());
                let text = std::fs::read_to_string(f).unwrap_or_default();
                (name.unwrap_or_default(), code_of(&text))
            })
            .collect();
        // Which file defines each method.
        let mut home: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (file, text) in &code {
            for part in text.split("fn ").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                home.entry(name).or_default().insert(file.clone());
            }
        }
        let mut calls: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (file, text) in &code {
            let edges = calls.entry(vec![file.clone()]).or_default();
            for (method, homes) in &home {
                if !homes.contains(file) && text.contains(&format!("self.{method}(")) {
                    edges.extend(homes.iter().map(|h| vec![h.clone()]));
                }
            }
        }
        let found = circles(&calls);
        assert!(
            found.is_empty(),
            "the files of {folder} call one another in a circle (move the shared step below both): {found:?}"
        );
    }
}
