//! A PostgreSQL database of its own for each run of a case that needs one (the cluster cases,
//! push), made with `psql` and dropped when the run ends, however it ends.

use anyhow::{Context, Result, bail};
use std::process::Command;

/// A PostgreSQL database made for one bench run, dropped afterwards.
pub struct BenchDatabase {
    server: String,
    name: String,
    pub url: String,
}

impl BenchDatabase {
    pub fn create(server: &str) -> Result<BenchDatabase> {
        let name = format!("relay_bench_{}", std::process::id());
        psql(server, &format!("DROP DATABASE IF EXISTS {name}"))?;
        psql(server, &format!("CREATE DATABASE {name}"))?;
        let (base, _) = server.rsplit_once('/').context(
            "--postgres needs a URL with a database, e.g. postgres://postgres@127.0.0.1:5432/test",
        )?;
        Ok(BenchDatabase {
            server: server.to_string(),
            url: format!("{base}/{name}"),
            name,
        })
    }
}

impl Drop for BenchDatabase {
    fn drop(&mut self) {
        let _ = psql(
            &self.server,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

fn psql(server: &str, sql: &str) -> Result<()> {
    let out = Command::new("psql")
        .args([server, "-q", "-c", sql])
        .output()
        .context("psql (PostgreSQL's client) is needed for the cluster cases")?;
    if !out.status.success() {
        bail!(
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}
